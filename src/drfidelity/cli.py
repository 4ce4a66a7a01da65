"""Command line: ``drfidelity stage ...`` (the DVC stages), ``drfidelity score`` (your own data).

Arguments are parsed before anything numeric is imported, because the numeric settings of
:mod:`drfidelity.core.runtime` must be in place before numpy loads. Bad input (a ValueError, an
OSError, a MemoryError from a size estimate) is one line on stderr and exit code 2; ``--debug``
shows the traceback instead.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from drfidelity.core.console import configure_logging, user_error
from drfidelity.pipeline import STAGES  # loads no numeric library

if TYPE_CHECKING:
    from drfidelity.core.params import Params


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="drfidelity",
        description="Distance-fidelity benchmark of 2-D embeddings (see README.md).")
    parser.add_argument("--version", action="version", version=f"%(prog)s {_version()}")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--debug", action="store_true",
                        help="show the traceback of an error instead of one line")
    sub = parser.add_subparsers(dest="command", required=True)

    stage = sub.add_parser(
        "stage", parents=[common], help="run one pipeline stage (what dvc.yaml calls)",
        description="Run one stage of the DVC pipeline with the values of params.yaml. "
                    "generate/score/figures take a dataset name, embed <dataset>/<method>, "
                    "study_inputs a study (src/drfidelity/studies/<study>.py), "
                    "study_embed <study>/<method> and study_score one of a study's "
                    "table pairs as <study>/<stem> (the stem of its results files; studies.yaml "
                    "lists them); the other stages take none. "
                    "Always runs in exact numerics (see drfidelity.core.runtime).")
    stage.add_argument("name", choices=STAGES)
    stage.add_argument("dataset", nargs="?", metavar="target",
                       help="dataset name (generate, score, figures), <dataset>/<method> "
                            "(embed), study (study_inputs), <study>/<method> "
                            "(study_embed) or <study>/<stem> (study_score)")
    stage.add_argument("--params", type=Path, default=Path("params.yaml"),
                       help="parameter file (default: params.yaml)")
    stage.add_argument("--jobs", type=_positive, default=None,
                       help="embed and study_embed only: parallel jobs (default: "
                            "params.yaml `jobs`)")
    stage.add_argument("--reuse", type=Path, default=None, metavar="FOLDER",
                       help="embed and study_embed only: the checkout's map folder of the "
                            "same stage; maps of the same input, settings and seed are taken "
                            "from it instead of computed (what a release's dvc.yaml passes, "
                            "naming the folder as a dependency)")

    score = sub.add_parser(
        "score", parents=[common], help="score an embedding of your own data",
        description="Score an embedding (a map, usually 2-D) against its high-dimensional data "
                    "with every metric the inputs allow. DATA.npz holds X (N points x D features, or with "
                    "--metric precomputed an N x N distance matrix) and optionally X_truth, "
                    "labels, outlier_idx, outlier_dir, population; EMBEDDING.npy is (N, d), "
                    "any d >= 1. Prints a JSON object column -> value (NaN as null). Bad "
                    "input: one line on stderr, exit code 2.")
    score.add_argument("data", type=Path, metavar="DATA.npz")
    score.add_argument("embedding", type=Path, metavar="EMBEDDING.npy")
    score.add_argument("--metric", default="euclidean", metavar="NAME",
                       help="distance between the rows of X (and X_truth): euclidean (default), "
                            "any other scipy pdist metric (cosine, cityblock, correlation, ...), "
                            "or precomputed (X is itself the N x N distance matrix)")
    score.add_argument("--json", type=Path, default=None, metavar="OUT",
                       help="write the JSON here (atomically) instead of printing it")
    score.add_argument("--exact", action="store_true",
                       help="exact numerics (generic BLAS kernels, bit-identical to the pipeline); "
                            "default: this machine's fast kernels (differences ~1e-14)")

    sub.add_parser("env", help="print versions and numeric settings of this environment")

    worker = sub.add_parser(
        "worker", parents=[common], help="start Dask workers for the embed jobs (DRFIDELITY_SCHEDULER)",
        description="Start Dask worker processes that run drfidelity's embed jobs exactly as "
                    "this machine would: exact numerics, one thread per process. Point "
                    "DRFIDELITY_SCHEDULER at the same scheduler for `dvc repro`.")
    worker.add_argument("scheduler", metavar="tcp://HOST:PORT", help="the Dask scheduler")
    worker.add_argument("--nworkers", type=_positive, default=1,
                        help="worker processes to start (default: 1)")
    return parser


def _positive(text: str) -> int:
    """A count of processes: 0 or a negative number is refused, not read as a default or
    as one."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be 1 or more, got {value}")
    return value


def _check_scheduler(address: str, timeout: float = 5.0) -> None:
    """ValueError unless a scheduler accepts connections at ``address`` (tcp://HOST:PORT):
    Dask's worker would otherwise retry for 30 s and end in a long traceback."""
    import socket
    from urllib.parse import urlsplit

    parts = urlsplit(address)
    try:
        host, port = parts.hostname, parts.port
    except ValueError:  # a port that is no number
        host = port = None
    if parts.scheme != "tcp" or not host or not port:
        raise ValueError(f"the scheduler address must look like tcp://HOST:PORT, got {address!r}")
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as exc:
        raise ValueError(f"no Dask scheduler answers at {address} ({exc.strerror or exc}); "
                         "start one (`dask scheduler`) and pass its address") from None
    if _identity(address, timeout).get("type") != "Scheduler":
        raise ValueError(f"{address} accepts connections but is not a Dask scheduler")


def _identity(address: str, timeout: float) -> dict:
    """What the server at ``address`` says it is in Dask's handshake ({} when it does not
    speak Dask's protocol)."""
    import asyncio

    from distributed.core import rpc

    async def ask() -> dict:
        remote = rpc(address, timeout=timeout)
        try:
            return await asyncio.wait_for(remote.identity(), timeout)
        finally:
            await remote.close_rpc()
    try:
        found = asyncio.run(ask())
    except Exception:  # noqa: BLE001 - anything but a Dask answer (garbage frames, a timeout)
        return {}
    return found if isinstance(found, dict) else {}


def _version() -> str:
    from drfidelity import __version__

    return __version__


def main(argv: list[str] | None = None) -> int:
    """Run the command; Ctrl-C is one line and exit code 130 (128 + SIGINT), as in a shell."""
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("drfidelity: interrupted", file=sys.stderr)
        return 130


def _main(argv: list[str] | None) -> int:
    args = build_parser().parse_args(argv)
    configure_logging()
    from drfidelity.core import runtime

    if args.command == "score":
        runtime.configure("exact" if args.exact else "fast")
        from drfidelity.metrics.cli import run

        return run(args.data, args.embedding, args.json, metric=args.metric, debug=args.debug)

    runtime.configure("exact")
    if args.command == "worker":
        try:
            _check_scheduler(args.scheduler)
        except (ValueError, OSError) as exc:
            return user_error("drfidelity worker", exc, args.debug)
        # the worker processes inherit the exact-numerics environment set just above; they
        # are not daemons, so that each can spawn the process its jobs run in
        os.environ["DASK_DISTRIBUTED__WORKER__DAEMON"] = "False"
        os.execv(sys.executable, [sys.executable, "-m", "distributed.cli.dask_worker",
                                  args.scheduler, "--nthreads", "1",
                                  "--nworkers", str(args.nworkers), "--no-dashboard"])
    if args.command == "env":
        for key, value in runtime.describe().items():
            print(f"{key}: {value}")
        return 0
    return _run_stage(args)


def _run_stage(args: argparse.Namespace) -> int:
    from drfidelity.core.params import ParamsError, load_params, restore_refused_experiment

    try:
        from drfidelity import pipeline
        from drfidelity.core import runtime

        module = pipeline.stage_module(args.name)
        if (module.TARGET is None) != (args.dataset is None):
            need = {"dataset": "needs a dataset name", "study": "needs a study name",
                    "dataset/method": "needs <dataset>/<method>",
                    "study/method": "needs <study>/<method>",
                    None: "takes no dataset name"}[module.TARGET]
            print(f"drfidelity stage {args.name} {need}", file=sys.stderr)
            return 2
        try:
            params = load_params(args.params, module.NAMES)
        except ParamsError as exc:  # an experiment's -S values are undone where possible
            raise ParamsError(f"{exc}{restore_refused_experiment(args.params, exc)}") from None
        _check_target(module.TARGET, args.dataset, params)
        # a stage whose caller is gone (dvc killed) must not run on and rewrite its outputs;
        # a pool's workers follow their stage
        runtime.die_with_parent(os.getppid())
        pipeline.run_stage(params, module, args.dataset, root=Path("."), jobs=args.jobs,
                           reuse=args.reuse)
    except Exception as exc:  # noqa: BLE001 - user_error re-raises what is not bad input
        return user_error(f"drfidelity stage {args.name}", exc, args.debug)
    return 0


def _check_target(kind: str | None, target: str | None, params: Params) -> None:
    """ParamsError unless ``target`` names a dataset of params and, for a map stage, a method:
    one of params' for a dataset, any registered one for a study (a study's map stages exist
    for every method; one that params leave out writes an empty status), found by its name
    alone (a map stage reads no list of names), with its settings checked."""
    from drfidelity.core.params import ParamsError
    from drfidelity.method_specs import spec

    if kind not in ("dataset", "dataset/method", "study/method"):
        return
    head, _, method = target.partition("/")
    if kind == "dataset/method" and method not in params.methods:
        raise ParamsError(f"{target!r}: expected <dataset>/<method> with a method of "
                          f"params.yaml `methods` ({', '.join(params.methods)})")
    if kind.endswith("/method"):
        try:
            found = spec(method)
        except ValueError as exc:
            raise ParamsError(f"{target!r}: expected <study>/<method> with a registered "
                              f"method ({exc})") from None
        try:  # a map stage's own method, which params were not checked for (NAMES = None)
            found.settings(params.method_params.get(method, {}), f"method_params.{method}")
        except ValueError as exc:
            raise ParamsError(str(exc)) from None
    if kind.startswith("dataset") and head not in params.datasets:
        raise ParamsError(f"dataset {head!r} is not in params.yaml `datasets` "
                          f"({', '.join(params.datasets)})")

if __name__ == "__main__":
    sys.exit(main())
