"""Wall time of the embed stage with one versus several parallel jobs.

Usage: python benchmarks/bench_embed_stage.py [--dataset clusters] [--jobs 1 2]
       [--params params.yaml]

Runs the generate stage once and the embed stage once per job count in a temporary directory,
with every method and seed of the parameter file, and checks that the embeddings are
byte-identical whatever the job count.
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
    from drfidelity.pipeline import embed, generate, layout
    from drfidelity.core.params import load_params

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
            embed.run(params, args.dataset, root, jobs=jobs)
            seconds = time.perf_counter() - start
            digests[jobs] = digest(layout.embeddings_dir(root, args.dataset))
            print(f"embed {args.dataset}: {len(embed.plan(params))} jobs, --jobs {jobs}: "
                  f"{seconds:.1f} s wall")
        same = len(set(digests.values())) == 1
        print("embeddings identical across job counts:", same)


if __name__ == "__main__":
    main()
