"""Speed-up of ``neighbourhood_scores`` (T, C, recall at k = 5, 15, 30) with its row blocks on
1, 2, 4 workers: threads (``n_jobs``) and a Dask LocalCluster (``scheduler``).

  python benchmarks/bench_neighbours_workers.py [--n 20000] [--d 50] [--workers 1 2 4]
                                                [--backend threads dask]
  python benchmarks/bench_neighbours_workers.py --n 100000 --cpu-share 0.05

``--cpu-share`` measures instead the CPU seconds of every pass on that share of the rows (one
thread) and extrapolates to all rows: on a machine too busy for a wall time (a process at
nice 19 beside a rebuild may get a tenth of a core) the CPU time is still a fair measure.

Each run prints wall and CPU time, the speed-up over the first worker count of its backend,
whether the values are the same bytes as the first run, the process's peak RSS so far and the
load average (the machine may be shared: read the times against it). The data are those of
``bench_metrics.py`` (clusters in a 10-dim latent space, D dims plus noise, a noisy linear map).
A Dask worker is a process of its own (one thread each), so its CPU time is not in this
process's: the CPU column is then this process's only.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from drfidelity.core import runtime  # noqa: E402


def _peak_rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20


def _timed(function, *args, **kwargs) -> tuple[dict, float, float]:
    start, cpu = time.perf_counter(), time.process_time()
    values = function(*args, **kwargs)
    return values, time.perf_counter() - start, time.process_time() - cpu


def _run(X, Y, backend: str, workers: int) -> tuple[dict, float, float]:
    """(values, wall s, CPU s of this process); a cluster's start-up is not timed."""
    from drfidelity.metrics import neighbourhood_scores

    if backend == "threads":
        return _timed(neighbourhood_scores, X, Y, n_jobs=workers)
    from distributed import LocalCluster

    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster:
        return _timed(neighbourhood_scores, X, Y, scheduler=cluster.scheduler_address)


def cpu_estimate(X, Y, share: float) -> None:
    """CPU seconds of the three passes (Y's neighbour lists, X's lists and ranks, Y's ranks)
    on the first ``share`` of the row blocks, and their extrapolation to every row."""
    from drfidelity.metrics.distances import FeatureRows, row_blocks
    from drfidelity.metrics.neighbours import _nearest_block, _rank_block

    n, k = X.shape[0], 30
    high, low = FeatureRows(X, "euclidean", "X"), FeatureRows(Y, "euclidean", "Y")
    blocks = list(row_blocks(n, n))
    used = blocks[:max(1, int(len(blocks) * share))]
    rows = sum(len(block) for block in used)
    start = time.process_time()
    low_lists = [_nearest_block(low, block, k) for block in used]
    y_lists = time.process_time() - start
    high_done = [_rank_block(high, block, lists, None, k) for block, lists in zip(used, low_lists)]
    x_pass = time.process_time() - start - y_lists
    for block, (high_lists, _), lists in zip(used, high_done, low_lists):
        _rank_block(low, block, high_lists, lists, k)
    y_ranks = time.process_time() - start - y_lists - x_pass
    total = (y_lists + x_pass + y_ranks) * n / rows
    print(f"{rows:,} of {n:,} rows: CPU Y lists {y_lists:.1f} s, X lists + ranks {x_pass:.1f} s, "
          f"Y ranks {y_ranks:.1f} s; all rows about {total:.0f} CPU s; load "
          f"{os.getloadavg()[0]:.1f}", flush=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20000)
    parser.add_argument("--d", type=int, default=50)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--backend", nargs="+", choices=("threads", "dask"),
                        default=["threads", "dask"])
    parser.add_argument("--cpu-share", type=float, default=None, metavar="FRACTION",
                        help="only the CPU time on this share of the rows, extrapolated")
    args = parser.parse_args(argv)
    runtime.configure("exact")
    import numpy as np

    from bench_metrics import _dataset, _embedding
    from drfidelity.metrics import neighbourhood_scores

    X, _, _ = _dataset(args.n, args.d)
    Y = _embedding(X, 0)
    neighbourhood_scores(X[:50], Y[:50], k=(5,))  # compile (or load) the kernels first
    print(f"N = {args.n:,}, D = {args.d}, {os.cpu_count()} cores", flush=True)
    if args.cpu_share is not None:
        cpu_estimate(X, Y, args.cpu_share)
        return 0
    first = None
    for backend in args.backend:
        base = None
        for workers in args.workers:
            values, wall, cpu = _run(X, Y, backend, workers)
            first = first or values
            base = base or wall
            same = all(np.float64(values[key]).tobytes() == np.float64(first[key]).tobytes()
                       for key in first) and list(values) == list(first)
            print(f"{backend:7s} {workers} worker{'s' if workers > 1 else ' '}: "
                  f"{wall:7.1f} s wall, {cpu:7.1f} s CPU (this process), speed-up "
                  f"{base / wall:4.2f}x, same bytes: {'yes' if same else 'NO'}, peak RSS "
                  f"{_peak_rss_gb():.2f} GB, load {os.getloadavg()[0]:.1f}; "
                  f"trust_k15 {values['trust_k15']:.6f}", flush=True)
            if not same:
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
