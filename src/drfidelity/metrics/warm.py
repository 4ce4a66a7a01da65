"""Compile the metric engine's kernels once per machine, so that the first score is fast.

``python -m drfidelity.metrics.warm`` scores one small map that reaches every kernel and
prints one line: how many kernels were compiled and how many loaded from the disk cache (see
:mod:`.jit`), and where that cache is. ``tools/setup-env.sh`` runs it last; an image build can
run it too. The kernels do not depend on the numeric mode (exact and fast numerics choose
numpy's and OpenBLAS's kernels, not numba's code), so one warm-up serves both.
"""

from __future__ import annotations

import sys
import time


def warm_up() -> dict[str, float]:
    """Score one small map with ties in both spaces, truth, labels, outliers with directions,
    a population and the per-point columns, then its neighbour scores alone (their distance
    rows are compiled apart): every compiled pass of the engine. The score's row."""
    import numpy as np

    from .engine import score
    from .neighbours import neighbourhood_scores

    rng = np.random.default_rng(0)
    n = 48
    truth = np.round(2 * rng.normal(size=(n, 4)))  # on a grid: tied distances
    X = truth + np.round(rng.normal(size=(n, 4)))
    Y = np.round(X[:, :2] + rng.normal(size=(n, 2)))
    labels = (np.arange(n) >= 24).astype(int)  # two clusters of MIN_CLUSTER_POINTS or more
    neighbourhood_scores(X, Y, k=(5,))
    return score(X, Y, truth=truth, labels=labels, outlier_idx=[0, 5, 9],
                 outlier_dir=[0, 1, 1], population=(np.arange(n) % 6 == 0).astype(int))


def main() -> int:
    """Warm up in exact numerics; print one line (a second on stderr when nothing is cached)."""
    from drfidelity.core import runtime

    runtime.configure("exact")
    start = time.perf_counter()
    warm_up()
    from .jit import cache_root, cache_stats, cached

    stats = cache_stats()
    print(f"drfidelity: metric kernels ready in {time.perf_counter() - start:.1f} s "
          f"({stats['compiled']} compiled, {stats['loaded']} loaded from {cache_root()})")
    if not cached():
        print(f"drfidelity: warning: {cache_root()} is not writable, so every process compiles "
              "the kernels again; set NUMBA_CACHE_DIR to a writable folder", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
