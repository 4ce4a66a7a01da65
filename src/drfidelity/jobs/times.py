"""Run times recorded by rebuilds: each map job's seconds (the runner) and each stage's wall time
(tools/repro.py), in ``benchmarks/times/`` of the checkout, where benchmarks/bench_change.py
reads them to estimate what a change costs (docs/change_cost.md).

How long a job took never changes its map, so, like the rest of the executor, no stage depends
on this module, and nothing here fails a stage: a file that cannot be written costs one warning
line. Two stages may record at once (``tools/repro.py --stages 2``): each holds an exclusive
lock on the folder while it reads the file, replaces its own rows and renames the new file into
place.
"""

from __future__ import annotations

import csv
import fcntl
import io
import os
from collections.abc import Callable, Iterable
from pathlib import Path

from drfidelity.core.storage import atomic_write

FOLDER = Path("benchmarks") / "times"
JOBS = FOLDER / "jobs.csv"
STAGES = FOLDER / "stages.csv"
JOB_COLUMNS = ("pipeline", "stage", "method", "seed", "config", "n", "seconds", "cpu")
STAGE_COLUMNS = ("pipeline", "stage", "seconds", "cpu")


def pipeline_of(root: Path) -> tuple[Path, str] | None:
    """(the git checkout, its ``dvc.yaml`` of ``root``) when ``root`` is a pipeline folder of a
    git checkout, else None.

    Only such runs record: one file for both pipelines sits in the checkout, and a run in a
    temporary folder (a test, a toy input) records nothing, so it never writes into the
    repository and its times never mix with a real rebuild's.
    """
    root = Path(root).resolve()
    if not (root / "dvc.yaml").is_file():
        return None
    for top in (root, *root.parents):
        if (top / ".git").exists():
            return top, (root / "dvc.yaml").relative_to(top).as_posix()
    return None


def cpu_model() -> str:
    """The CPU's model name (/proc/cpuinfo): times are comparable on the same model only."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.partition(":")[2].strip()
    except OSError:
        pass
    return "unknown"


def read(path: Path) -> list[dict[str, str]]:
    """The rows of a times file (none when it does not exist yet)."""
    if not path.is_file():
        return []
    with path.open(newline="", encoding="utf-8") as file:
        return list(csv.DictReader(file))


def merge(path: Path, columns: tuple[str, ...], rows: Iterable[dict],
          replaces: Callable[[dict[str, str]], bool]) -> None:
    """Write ``rows`` into ``path`` in place of the rows that ``replaces`` selects, keeping every
    other row, under an exclusive lock of the folder (a lock on the file itself would be lost
    with the inode the rename replaces). Sorted, so a rebuild's diff shows only what changed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    folder = os.open(path.parent, os.O_RDONLY)
    try:
        fcntl.flock(folder, fcntl.LOCK_EX)
        kept = [row for row in read(path) if not replaces(row)]
        new = [{column: str(row[column]) for column in columns} for row in rows]
        merged = sorted(kept + new, key=lambda row: [
            row[column].zfill(12) if row[column].isdigit() else row[column]  # seeds, sizes
            for column in columns])
        text = io.StringIO()
        writer = csv.DictWriter(text, columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(merged)
        atomic_write(path, text.getvalue().encode("utf-8"))
    finally:
        os.close(folder)  # releases the lock


def _safely(what: str, path: Path, write: Callable[[], None]) -> None:
    try:
        write()
    except Exception as exc:  # noqa: BLE001 - a record is a side note; it never fails a run
        print(f"[{what}] warning: run times not recorded in {path}: {exc}", flush=True)


def record_jobs(root: Path, stage: str, jobs: Iterable[tuple[str, int, str, int, float]]) -> None:
    """Record one map stage's jobs as (method, seed, config, points, seconds), replacing that
    stage's earlier rows, when ``root`` is a pipeline folder of a git checkout."""
    found = pipeline_of(root)
    if found is None:
        return
    top, pipeline = found
    cpu = cpu_model()
    rows = [{"pipeline": pipeline, "stage": stage, "method": method, "seed": seed,
             "config": config, "n": n, "seconds": f"{seconds:.2f}", "cpu": cpu}
            for method, seed, config, n, seconds in jobs]
    _safely(stage, top / JOBS, lambda: merge(
        top / JOBS, JOB_COLUMNS, rows,
        lambda row: (row["pipeline"], row["stage"]) == (pipeline, stage)))


def record_stages(checkout: Path, seconds: dict[str, float]) -> None:
    """Record each stage's wall time, keyed as DVC names stages (``releases/v1.4.0/dvc.yaml:
    figures@density``; a bare name is the root's), replacing those stages' earlier rows, when
    ``checkout`` is the top of a git checkout holding a pipeline."""
    found = pipeline_of(checkout)
    if found is None or found[0] != Path(checkout).resolve() or not seconds:
        return
    cpu = cpu_model()
    rows = [{"pipeline": name.rpartition(":")[0] or "dvc.yaml", "stage": name.rpartition(":")[2],
             "seconds": f"{wall:.1f}", "cpu": cpu} for name, wall in seconds.items()]
    ran = {(row["pipeline"], row["stage"]) for row in rows}
    path = found[0] / STAGES
    _safely("repro", path, lambda: merge(
        path, STAGE_COLUMNS, rows, lambda row: (row["pipeline"], row["stage"]) in ran))
