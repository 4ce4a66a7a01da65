"""Bring in the previous release's public data: toorPIA's maps and its published tables.

The committed ``*.dvc`` import pointers under ``external_embeddings/`` and ``reference/`` name
folders of the previous release's public Git repository at tag v1.3.0; those below
``releases/<tag>/`` the same folders at a later tag (read by the ``release_diff`` stage only). ``dvc checkout``
restores what the local DVC cache already holds (no network); ``dvc pull`` fetches the rest by
cloning that repository. When the clone fails DVC only says "Checkout failed ... Is your cache
up to date?", so this prints one line saying what failed and what it means for the pipeline.

Usage: python tools/imports.py [--check | --offline]
  --check     only report what is missing; fetch nothing
  --offline   restore from the local DVC cache only; never clone
Exit status: 0 when every pointer's data is present, 1 otherwise.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


@dataclass(frozen=True)
class Pointer:
    path: Path      # the .dvc file, relative to the checkout
    out: Path       # the folder it brings, relative to the checkout
    nfiles: int
    url: str
    rev: str

    @property
    def dataset(self) -> str | None:
        """The dataset whose toorPIA maps the pipeline reads from this (None for the published
        tables and for a later release's data)."""
        parts = self.path.parts
        return parts[1] if parts[0] == "external_embeddings" else None

    @property
    def later_release(self) -> bool:
        """Whether this brings a later release's data (``releases/<tag>/...``)."""
        return self.path.parts[0] == "releases"


def pointers(root: Path) -> list[Pointer]:
    """Every committed import pointer of ``root`` (git-tracked ``*.dvc`` files with a repo dep)."""
    listed = subprocess.run(["git", "ls-files", "--", "*.dvc"], cwd=root, check=True,
                            capture_output=True, text=True).stdout.split()
    found = []
    for name in sorted(listed):
        record = yaml.safe_load((root / name).read_text())
        repo = (record.get("deps") or [{}])[0].get("repo")
        if not repo:
            continue
        [out] = record["outs"]
        path = Path(name)
        found.append(Pointer(path, path.parent / out["path"], int(out["nfiles"]), repo["url"],
                             repo["rev"]))
    return found


def is_present(root: Path, pointer: Pointer) -> bool:
    """Whether the pointer's folder holds its files (their bytes are checked by DVC at
    checkout and by the manifest when a map is read)."""
    folder = root / pointer.out
    return folder.is_dir() and sum(p.is_file() for p in folder.rglob("*")) == pointer.nfiles


def missing(root: Path) -> list[Pointer]:
    return [p for p in pointers(root) if not is_present(root, p)]


def _dvc(root: Path, verb: str, targets: list[Pointer]) -> None:
    subprocess.run(["dvc", verb, "--quiet", *(str(p.path) for p in targets)], cwd=root,
                   capture_output=True, text=True)


def pipeline_datasets(root: Path) -> list[str]:
    params = yaml.safe_load((root / "params.yaml").read_text()) if (root / "params.yaml").exists() \
        else {}
    return list(params.get("datasets", []))


def describe(absent: list[Pointer], root: Path) -> tuple[str, str]:
    """What is missing, and what that means for the configured pipeline's outputs."""
    maps = sorted({p.dataset for p in absent if p.dataset})
    tables = any(p.dataset is None and not p.later_release for p in absent)
    later = sorted({p.rev for p in absent if p.later_release})
    what = [f"toorPIA's maps of {len(maps)} dataset folder(s)"] if maps else []
    what += ["the published tables"] if tables else []
    what += [f"the data of {', '.join(later)}"] if later else []
    effects = []
    hit = [d for d in pipeline_datasets(root) if d in maps]
    if hit:
        effects.append(f"toorPIA will be reported unavailable for {', '.join(hit)}, so the "
                       "committed tables that rank it will differ (its rows are missing; other "
                       "methods' rank points, the sums and the marks move)")
    if tables:
        effects.append("tools/compare_published.py cannot run")
    if tables or later:
        effects.append("the release_diff stage writes its tables with their header only and "
                       "REPORT says so")
    return (f"{len(absent)} of {len(pointers(root))} imports ({' and '.join(what)})",
            "; ".join(effects) or "the configured pipeline does not use them")


def fetch(root: Path, offline: bool = False) -> str | None:
    """Restore every import from the local cache, then (unless ``offline``) pull what is still
    missing; return None when all data is present, else one line naming what failed and what
    it means."""
    absent = missing(root)
    if absent:
        _dvc(root, "checkout", absent)
        absent = missing(root)
    if absent and not offline:
        _dvc(root, "pull", absent)
        absent = missing(root)
    if not absent:
        return None
    what, effects = describe(absent, root)
    if offline:
        cause = "not in the local DVC cache, and --offline forbids a clone"
    else:
        sources = ", ".join(sorted({f"{p.url} at {p.rev}" for p in absent}))
        cause = (f"DVC could not clone {sources} (no network, or the host is unreachable; DVC "
                 "itself only says \"Checkout failed ... Is your cache up to date?\")")
    return f"missing {what}: {cause}. Consequence: {effects}."


def main(argv: list[str]) -> int:
    if argv not in ([], ["--check"], ["--offline"]):
        print(__doc__.split("Usage:")[1].strip(), file=sys.stderr)
        return 2
    if argv == ["--check"]:
        absent = missing(REPO)
        for pointer in absent:
            print(f"imports: missing {pointer.out} ({pointer.path})")
        return 1 if absent else 0
    problem = fetch(REPO, offline=argv == ["--offline"])
    print(f"imports: {problem}" if problem else
          f"imports: all {len(pointers(REPO))} imports present")
    return 1 if problem else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
