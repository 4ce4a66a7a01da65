"""Wall time of a dataset's embed stages with one versus several parallel jobs.

Usage: python benchmarks/bench_embed_stage.py [--dataset clusters] [--jobs 1 2]
       [--params params.yaml]

Runs the generate stage once and the dataset's embed stages (one per method of the parameter
file, every seed) once per job count in a temporary directory, and checks that the embeddings
are byte-identical whatever the job count.
"""

from __future__ import annotations

import argparse
import hashlib
import shutil
import tempfile
import time
from pathlib import Path

from drfidelity.core import runtime

REPO = Path(__file__).resolve().parents[1]


def digest(directory: Path) -> str:
    h = hashlib.sha256()
    for f in sorted(p for p in directory.rglob("*") if p.is_file()):
        h.update(str(f.relative_to(directory)).encode() + f.read_bytes())
    return h.hexdigest()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="clusters")
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--params", type=Path, default=REPO / "params.yaml")
    args = parser.parse_args()
    runtime.configure("exact")
    from drfidelity.core import layout
    from drfidelity.core.params import load_params
    from drfidelity.pipeline import embed, generate

    params = load_params(args.params)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if (REPO / "external_embeddings").is_dir():
            shutil.copytree(REPO / "external_embeddings", root / "external_embeddings")
        shutil.copy(REPO / "external_embeddings.manifest.json", root)
        generate.run(params, args.dataset, root)
        digests = {}
        for jobs in args.jobs:
            start = time.perf_counter()
            for name in params.methods:
                embed.run(params, f"{args.dataset}/{name}", root, jobs=jobs)
            seconds = time.perf_counter() - start
            digests[jobs] = digest(layout.embeddings_dir(root, args.dataset))
            count = sum(len(embed.plan(params, name)) for name in params.methods)
            print(f"embed {args.dataset}: {count} jobs in {len(params.methods)} stages, "
                  f"--jobs {jobs}: {seconds:.1f} s wall")
        same = len(set(digests.values())) == 1
        print("embeddings identical across job counts:", same)


if __name__ == "__main__":
    main()
