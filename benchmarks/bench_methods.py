"""Per-method embed time at the benchmark's size (N=1000, D=768), one thread per call.

Data: the canonical ``density`` input (data seed 0, SNR 1) from ``drfidelity.datasets``.
Each method runs in its own fresh interpreter, so "first" includes that method's imports and
JIT compilation (UMAP's numba, PCC's torchdr) and no other method's; "warm" is a second call
with the same seed in the same process (wall and CPU seconds).

``--mkl-sqrt-anchor`` adds, for PyMDE and PCC, a row with torch's own square root (MKL's vector
math, which is not the same bits on AMD and Intel CPUs) beside the IEEE one they use, each in its
own interpreter, run alternately: the cost of computing those square roots portably.

    .venv/bin/python benchmarks/bench_methods.py                # all methods, Markdown table
    .venv/bin/python benchmarks/bench_methods.py --methods PCA UMAP
    .venv/bin/python benchmarks/bench_methods.py --methods PyMDE PCC --mkl-sqrt-anchor
"""

from __future__ import annotations

from drfidelity.core import runtime

runtime.configure("exact")

import argparse  # noqa: E402
import json  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

N, D, DATA_SEED, SNR = 1000, 768, 0, 1


#: the torch-based methods, whose square roots drfidelity takes in IEEE arithmetic
TORCH_METHODS = ("PyMDE", "PCC")


def time_method(name: str, mkl_sqrt: bool = False) -> dict[str, float]:
    """First-call and warm timings of one method in this process; with ``mkl_sqrt``, torch
    keeps its own (MKL) square root: the anchor of the IEEE one."""
    from drfidelity.datasets import generate
    from drfidelity.methods import embed, get_method, torch_setup

    if mkl_sqrt:
        torch_setup.use_ieee_square_root = lambda torch: None

    X = generate("density", n=N, d=D, data_seed=DATA_SEED, snr=SNR)["X"]
    method = get_method(name)
    timings = {}
    for label in ("first", "warm"):
        wall, cpu = time.perf_counter(), time.process_time()
        embed(method, X, 0)
        timings[f"{label}_wall"] = time.perf_counter() - wall
        timings[f"{label}_cpu"] = time.process_time() - cpu
    return timings


def main(argv: list[str] | None = None) -> None:
    from drfidelity.methods import METHODS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--methods", nargs="+", default=list(METHODS), choices=list(METHODS))
    parser.add_argument("--mkl-sqrt-anchor", action="store_true",
                        help="also time PyMDE and PCC with torch's own (MKL) square root")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--mkl-sqrt", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        print(json.dumps(time_method(args.worker, args.mkl_sqrt)))
        return
    print(f"density N={N} D={D} data_seed={DATA_SEED} SNR={SNR}, seed 0, one thread, "
          f"numerics {runtime.current_mode()}\n")
    print("| method | first call, wall s | warm, wall s | warm, CPU s |")
    print("|---|---:|---:|---:|")
    for name in args.methods:
        variants = [[]]
        if args.mkl_sqrt_anchor and name in TORCH_METHODS:
            variants.append(["--mkl-sqrt"])
        for variant in variants:
            done = subprocess.run([sys.executable, __file__, "--worker", name, *variant],
                                  capture_output=True, text=True, check=True)
            t = json.loads(done.stdout.strip().splitlines()[-1])
            label = f"{name}, torch's MKL sqrt (anchor)" if variant else name
            print(f"| {label} | {t['first_wall']:.2f} | {t['warm_wall']:.2f} "
                  f"| {t['warm_cpu']:.2f} |", flush=True)


if __name__ == "__main__":
    main()
