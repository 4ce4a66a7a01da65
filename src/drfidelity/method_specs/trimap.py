"""TriMap (trimap 1.2.0, run as ``trimap.TorchTRIMAP``) (wrapper: ``methods/trimap.py``);
registered for the living benchmark (issue 42), run by neither frozen release. Defaults: the
library's documented ones."""

from drfidelity.core.method import Method, at_least


def clamp_triplet_size(size: int, n: int) -> int:
    """min(size, max(1, (N-2)//2)), TriMap's n_inliers and n_outliers alike: it needs
    n_inliers < N-1 and n_inliers + n_outliers < N, which two halves of N-2 keep (no change
    from N = 26 on at its defaults, 12 and 4). Here, not in ``core/``: only TriMap's maps read
    it."""
    at_least(1)("size", size)
    return min(size, max(1, (n - 2) // 2))


#: seconds: one map at N = 1000, D = 768 in a fresh process, imports included, measured on
#: 2 cores beside another run (3.2 s), not yet by benchmarks/bench_methods.py
SPEC = Method("TriMap", stochastic=True,
              defaults={"n_inliers": 12, "n_outliers": 4, "n_random": 3},
              checks={"n_inliers": at_least(1), "n_outliers": at_least(1),
                      "n_random": at_least(0)},
              clamps={"n_inliers": clamp_triplet_size, "n_outliers": clamp_triplet_size},
              not_operable="TorchTRIMAP has no out-of-sample transform", seconds=4)
