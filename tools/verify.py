"""The reviewer's verdict: does a fresh clone of HEAD rebuild every committed output byte for byte?

Clones HEAD into a scratch folder, brings in the imports (toorPIA's maps, the published
tables: tools/imports.py), runs ``dvc repro --force --no-run-cache`` (every stage of the
pipeline really runs, the frozen scale study excepted: no output is taken from a cache or left
standing because its inputs hash-match), then prints one row per committed output: identical
or not, and why not. The exit status is the verdict: 0 only when every stage ran, every output
and ``dvc.lock`` came back identical and ``dvc status --no-updates`` is clean.

A release is verified in its folder: the first (v1.3.0) at the root, a later one, or the
living configuration, below ``releases/<name>/`` (its own ``dvc.yaml`` and ``dvc.lock``,
tools/release_pipeline.py).

The clone uses this checkout's DVC cache, so objects fetched once (or copied there for offline
work) are not fetched again; on a new machine that cache is empty and ``dvc pull`` fetches them.

Usage: python tools/verify.py [--repo DIR] [--cache DIR] [--offline] [--workdir DIR] [--keep]
                               [--release TAG] [--targets STAGE ...]
  --repo DIR      the repository whose HEAD is verified (default: this checkout)
  --cache DIR     the DVC cache the clone uses (default: the repository's own)
  --offline       restore the imports from that cache only; never clone
  --workdir DIR   where to clone (default: a new temporary folder)
  --keep          keep the clone afterwards (it is removed on success otherwise)
  --release TAG   the release (or ``living``) whose pipeline is rebuilt (default: the first,
                  at the root)
  --targets STAGE reproduce only these stages and what they depend on, and compare only their
                  outputs (``--targets aggregate figures``: the main benchmark, what CI runs)
"""

from __future__ import annotations

import argparse
import csv
import io
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import imports  # noqa: E402

from drfidelity.core.layout import CONFIGURATIONS, RELEASES, configuration_root  # noqa: E402


def pipeline_folder(release: str) -> Path:
    """``release``'s folder, relative to the repository: the root, or ``releases/<name>``."""
    return Path(".") if release == RELEASES[0] else configuration_root(Path("."), release)


def pipeline_file(release: str) -> str:
    """``release``'s ``dvc.yaml``, relative to the repository: the root's, or its folder's."""
    return (pipeline_folder(release) / "dvc.yaml").as_posix()


def git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, check=True, capture_output=True,
                          text=True).stdout


def dvc(root: Path, *args: str, log: Path | None = None) -> int:
    """Run dvc in ``root`` with ``root``'s own code first on the import path (the environment's
    editable install points at the checkout, whose working tree may differ from HEAD); with
    ``log``, stream its output there as well as to stdout."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [str(root / "src"), os.environ.get("PYTHONPATH")]))}
    if log is None:
        return subprocess.run(["dvc", *args], cwd=root, env=env, capture_output=True).returncode
    with log.open("w") as sink:
        proc = subprocess.Popen(["dvc", *args], cwd=root, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
        for line in proc.stdout:
            sink.write(line)
            print(f"  | {line}", end="", flush=True)
        return proc.wait()


def upstream(lock: dict, targets: list[str]) -> set[str]:
    """The lock's stages that ``dvc repro TARGETS`` runs: the targets (a foreach/matrix name
    stands for all its instances) and every stage whose outputs they read, at any depth."""
    stages = lock["stages"]
    producer = {out["path"]: name for name, entry in stages.items()
                for out in entry.get("outs", [])}
    todo = [n for n in stages if n in targets or n.split("@")[0] in targets]
    seen: set[str] = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        for dep in stages[name].get("deps", []):
            todo += [stage for out, stage in producer.items()
                     if dep["path"] == out or dep["path"].startswith(f"{out}/")
                     or out.startswith(f"{dep['path']}/")]
    return seen


def frozen_stages(root: Path) -> set[str]:
    """The stages ``dvc.yaml`` marks ``frozen`` (never rerun: the scale study's timings)."""
    stages = yaml.safe_load((root / "dvc.yaml").read_text())["stages"]
    return {name for name, entry in stages.items() if entry.get("frozen")}


def committed_outputs(root: Path, targets: list[str] | None = None, folder: str = "."
                      ) -> tuple[list[str], list[str]]:
    """The outputs that git tracks of the pipeline in ``folder`` (its dvc.lock lists every
    output; the cached ones are git-ignored), of every stage or of those ``targets`` run: their
    paths, and their files plus that dvc.lock, which ``dvc repro`` must bring back byte for
    byte. Paths are relative to ``root``."""
    lock = yaml.safe_load((root / folder / "dvc.lock").read_text())
    chosen = upstream(lock, targets) if targets else set(lock["stages"])
    outs = sorted({(Path(folder) / out["path"]).as_posix()
                   for name, entry in lock["stages"].items() if name in chosen
                   for out in entry.get("outs", [])})
    files = git(root, "ls-files", "--", *outs).split() if outs else []
    tracked = [out for out in outs if any(f == out or f.startswith(f"{out}/") for f in files)]
    return tracked, sorted(files) + [(Path(folder) / "dvc.lock").as_posix()]


def skipped_methods(text: str) -> dict[str, str]:
    """Method -> its reasons (one line per dataset), from the text of skipped_methods.csv."""
    reasons: dict[str, list[str]] = {}
    for row in csv.DictReader(io.StringIO(text)):
        reasons.setdefault(row["method"], []).append(f"{row['dataset']}: {row['reason']}")
    return {method: "\n".join(lines) for method, lines in reasons.items()}


def explain(changed: bool, newly_skipped: dict[str, str], import_problem: str | None) -> str:
    if not changed:
        return ""
    if newly_skipped:
        return "; ".join(f"{m} unavailable (why: below)" for m in sorted(newly_skipped))
    if import_problem:
        return "imports missing (see above)"
    return "not explained by a missing input: compare with `git diff` in the clone"


def verify(repo: Path, workdir: Path, cache: Path | None, offline: bool,
           targets: list[str] | None = None, release: str = RELEASES[0]
           ) -> tuple[bool, list[tuple[str, str, str]], dict[str, str]]:
    """Clone, import, reproduce ``release``'s pipeline, compare: (verdict, one row per output,
    why methods that the commit has were unavailable)."""
    clone = workdir / "clone"
    folder = pipeline_folder(release).as_posix()
    pipeline = pipeline_file(release)
    # only this release's pipeline: every stage of its dvc.yaml, or the targets in it
    chosen = [f"{pipeline}:{t}" for t in targets] if targets else [pipeline]
    print(f"verify: cloning {repo} at {git(repo, 'rev-parse', '--short', 'HEAD').strip()} "
          f"into {clone}", flush=True)
    subprocess.run(["git", "clone", "-q", str(repo), str(clone)], check=True)
    if cache is None:
        cache = Path(subprocess.run(["dvc", "cache", "dir"], cwd=repo, capture_output=True,
                                    text=True, check=True).stdout.strip())
    dvc(clone, "cache", "dir", "--local", str(cache.resolve()))

    print("verify: 1/3 imports (tools/imports.py)", flush=True)
    problem = imports.fetch(clone, offline=offline)
    print(f"verify: {problem}" if problem else "verify: all imports present", flush=True)

    print(f"verify: 2/3 dvc repro --force --no-run-cache {' '.join(chosen)}", flush=True)
    start = time.monotonic()
    log = workdir / "repro.log"
    repro_failed = dvc(clone, "repro", "--force", "--no-run-cache", *chosen, log=log) != 0
    ran = {name.removeprefix(f"{pipeline}:") for name in
           re.findall(r"^Running stage '([^']+)'", log.read_text(), flags=re.M)}
    lock = yaml.safe_load((clone / folder / "dvc.lock").read_text())
    expected = {name for name in (upstream(lock, targets) if targets else lock["stages"])
                if name not in frozen_stages(clone / folder)}
    print(f"verify: dvc repro {'FAILED' if repro_failed else 'done'} in "
          f"{time.monotonic() - start:.0f} s, {len(ran)} of {len(expected)} stages ran "
          f"(log: {log})", flush=True)

    print("verify: 3/3 committed outputs against HEAD", flush=True)
    table = Path(folder) / "results" / "skipped_methods.csv"
    committed = git(clone, "show", f"HEAD:{table}") if (clone / table).exists() else ""
    now = (clone / table).read_text() if (clone / table).exists() else ""
    before = skipped_methods(committed)
    newly_skipped = {m: r for m, r in skipped_methods(now).items() if m not in before}
    outs, files = committed_outputs(clone, targets, folder)
    rows = []
    for path in files:
        changed = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", path],
                                 cwd=clone).returncode != 0
        rows.append((path, "differs" if changed else "identical",
                     explain(changed, newly_skipped, problem)))
    for path in git(clone, "ls-files", "--others", "--exclude-standard", "--", *outs).split():
        rows.append((path, "new", "not in the commit"))
    status_clean = dvc(clone, "status", "--no-updates", "--quiet", *chosen) == 0
    if not status_clean:
        rows.append(("(dvc status --no-updates)", "not clean",
                     "pipeline not up to date after dvc repro"))
    for name in sorted(expected - ran):
        rows.append((f"(stage {name})", "not run", "dvc repro did not run it"))
    ok = not repro_failed and status_clean and all(r[1] == "identical" for r in rows)
    return ok, rows, newly_skipped


def print_table(rows: list[tuple[str, str, str]], unavailable: dict[str, str]) -> None:
    width = max(len(r[0]) for r in rows)
    for path, state, why in rows:
        print(f"  {path:<{width}}  {state:<9}  {why}".rstrip())
    for method, reasons in sorted(unavailable.items()):
        print(f"\n{method} was unavailable in this run:")
        for line in reasons.splitlines():
            print(f"  {line}")


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, usage=argparse.SUPPRESS,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", type=Path, default=imports.REPO)
    parser.add_argument("--cache", type=Path)
    parser.add_argument("--offline", action="store_true")
    parser.add_argument("--workdir", type=Path)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("--release", default=RELEASES[0], choices=(RELEASES[0], *CONFIGURATIONS))
    parser.add_argument("--targets", nargs="+", metavar="STAGE")
    args = parser.parse_args(argv)
    if subprocess.run(["git", "rev-parse", "HEAD"], cwd=args.repo if args.repo.is_dir() else None,
                      capture_output=True).returncode != 0 or not args.repo.is_dir():
        print(f"verify: {args.repo} is not a git repository with a commit", file=sys.stderr)
        return 2
    pipeline = pipeline_file(args.release)
    if subprocess.run(["git", "cat-file", "-e", f"HEAD:{pipeline}"], cwd=args.repo,
                      capture_output=True).returncode != 0:
        print(f"verify: {pipeline} is not committed, so {args.release} has no committed outputs "
              f"to verify: `make repro RELEASE={args.release}`, then commit its pipeline, lock "
              "and outputs", file=sys.stderr)
        return 2
    workdir = args.workdir or Path(tempfile.mkdtemp(prefix="drfidelity-verify."))
    workdir.mkdir(parents=True, exist_ok=True)
    ok, rows, unavailable = verify(args.repo.resolve(), workdir, args.cache, args.offline,
                                   args.targets, args.release)
    print_table(rows, unavailable)
    same = sum(r[1] == "identical" for r in rows)
    print(f"\nVERDICT: {'REPRODUCED' if ok else 'NOT REPRODUCED'}: {same} of {len(rows)} "
          f"committed outputs byte-identical to HEAD")
    if ok and not args.keep:
        shutil.rmtree(workdir)
    else:
        print(f"verify: the clone is kept in {workdir / 'clone'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
