"""Command line: ``drfidelity stage ...`` (the DVC stages), ``drfidelity score`` (your own data).

Arguments are parsed before anything numeric is imported, because the numeric settings of
:mod:`drfidelity.runtime` must be in place before numpy loads.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from drfidelity.pipeline import PER_DATASET, STAGES  # loads no numeric library


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="drfidelity",
        description="Distance-fidelity benchmark of 2-D embeddings (see README.md).")
    sub = parser.add_subparsers(dest="command", required=True)

    stage = sub.add_parser(
        "stage", help="run one pipeline stage (what dvc.yaml calls)",
        description="Run one stage of the DVC pipeline with the values of params.yaml. "
                    "generate/embed/score/figures take a dataset name; aggregate/report take none. "
                    "Always runs in exact numerics (see drfidelity.runtime).")
    stage.add_argument("name", choices=STAGES)
    stage.add_argument("dataset", nargs="?", help="dataset name (generate, embed, score, figures)")
    stage.add_argument("--params", type=Path, default=Path("params.yaml"),
                       help="parameter file (default: params.yaml)")
    stage.add_argument("--jobs", type=int, default=None,
                       help="embed only: parallel jobs (default: params.yaml `jobs`)")

    score = sub.add_parser(
        "score", help="score an embedding of your own data",
        description="Score a 2-D embedding against its high-dimensional data with every metric "
                    "the inputs allow. DATA.npz holds X and optionally X_truth, labels, "
                    "outlier_idx, outlier_dir, population; EMBEDDING.npy is (N, 2). Prints a "
                    "JSON object column -> value (NaN as null).")
    score.add_argument("data", type=Path, metavar="DATA.npz")
    score.add_argument("embedding", type=Path, metavar="EMBEDDING.npy")
    score.add_argument("--json", type=Path, default=None, metavar="OUT",
                       help="write the JSON here instead of printing it")
    score.add_argument("--exact", action="store_true",
                       help="exact numerics (generic BLAS kernels, bit-identical to the pipeline); "
                            "default: this machine's fast kernels (differences ~1e-14)")

    sub.add_parser("env", help="print versions and numeric settings of this environment")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from drfidelity import runtime

    if args.command == "score":
        runtime.configure("exact" if args.exact else "fast")
        from drfidelity.metrics.cli import run

        return run(args.data, args.embedding, args.json)

    runtime.configure("exact")
    if args.command == "env":
        for key, value in runtime.describe().items():
            print(f"{key}: {value}")
        return 0
    return _run_stage(args)


def _run_stage(args: argparse.Namespace) -> int:
    from drfidelity.pipeline.params import ParamsError, load_params

    if (args.name in PER_DATASET) != (args.dataset is not None):
        need = "needs a dataset name" if args.name in PER_DATASET else "takes no dataset name"
        print(f"drfidelity stage {args.name} {need}", file=sys.stderr)
        return 2
    try:
        params = load_params(args.params)
        if args.dataset is not None and args.dataset not in params.datasets:
            raise ParamsError(f"dataset {args.dataset!r} is not in params.yaml `datasets` "
                              f"({', '.join(params.datasets)})")
        from drfidelity import pipeline

        pipeline.run_stage(params, args.name, args.dataset, root=Path("."), jobs=args.jobs)
    except (ParamsError, ValueError, FileNotFoundError) as exc:
        print(f"drfidelity stage {args.name}: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
