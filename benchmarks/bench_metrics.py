"""Timings and peak memory of the metric engine.

  python benchmarks/bench_metrics.py score      [--n 1000] [--d 768]   # (a) full row, one map
  python benchmarks/bench_metrics.py neighbours [--n 1000 5000 10000]  # (b) vs sklearn, k=5,15,30
  python benchmarks/bench_metrics.py large      [--n 20000] [--d 50]   # (c) whole score, big N
  add --numerics fast for the machine's own kernels (default: exact, as in the pipeline).

Data are synthetic: clusters in a 10-dim latent space mapped into D dims plus noise, labels =
cluster ids, truth = the noise-free points, embeddings = a noisy linear map to 2-D. Each part
prints its timings and the process's peak RSS (``resource.getrusage``). Part (b) times the
public ``drfidelity.metrics.neighbourhood_scores`` side by side with scikit-learn in one process:
it first compiles the numba kernels on a tiny input and prints that once-per-process cost; its
timings are warm, best of --repeats runs (scikit-learn runs once).
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from drfidelity import runtime  # noqa: E402


def _peak_rss_gb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # ru_maxrss is in KiB


def _dataset(n: int, d: int, seed: int = 0):
    import numpy as np

    rng = np.random.default_rng(seed)
    labels = rng.integers(0, 8, size=n)
    centres = rng.normal(scale=4.0, size=(8, 10))
    latent = centres[labels] + rng.normal(size=(n, 10))
    truth = latent @ np.linalg.qr(rng.normal(size=(d, 10)))[0].T
    X = truth + rng.normal(scale=truth.std(), size=truth.shape)
    return X, truth, labels


def _embedding(X, seed: int):
    import numpy as np

    rng = np.random.default_rng(seed)
    return X @ rng.normal(size=(X.shape[1], 2)) + 0.1 * rng.normal(size=(X.shape[0], 2))


def _timed(function, *args, **kwargs):
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - start


def part_score(n: int, d: int, repeats: int) -> None:
    from drfidelity.metrics import Reference

    X, truth, labels = _dataset(n, d)
    reference, build = _timed(Reference, X, truth=truth, labels=labels, per_point=True)
    times = [_timed(reference.score, _embedding(X, seed))[1] for seed in range(repeats)]
    row = reference.score(_embedding(X, 0))
    print(f"score N={n} D={d}: {len(row)} columns; Reference {build:.2f} s; "
          f"score per embedding min {min(times):.3f} s / "
          f"median {sorted(times)[len(times) // 2]:.3f} s "
          f"over {repeats}; peak RSS {_peak_rss_gb():.2f} GB")


def part_neighbours(sizes: list[int], d: int, sklearn_limit: int, repeats: int) -> None:
    """The public ``neighbourhood_scores`` (T, C, recall at k = 5, 15, 30 in one call) against
    six ``sklearn.manifold.trustworthiness`` calls (T and C at three k), same process, same data;
    the values must agree to 1e-12."""
    import numpy as np
    from sklearn.manifold import trustworthiness as sk_trust

    start = time.perf_counter()
    from drfidelity.metrics import neighbourhood_scores
    imported = time.perf_counter() - start
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    neighbourhood_scores(rng.normal(size=(40, 3)), rng.normal(size=(40, 2)), k=(5,))
    compiled = time.perf_counter() - start
    print(f"cold start (once per process): import incl. numba {imported:.2f} s, "
          f"kernel JIT {compiled:.2f} s; the timings below are warm")

    ks = (5, 15, 30)
    for n in sizes:
        X, _, _ = _dataset(n, d)
        Y = _embedding(X, 0)
        runs = [_timed(neighbourhood_scores, X, Y, k=ks) for _ in range(repeats)]
        ours, t_ours = runs[0][0], min(t for _, t in runs)
        line = (f"neighbours N={n} D={d}: neighbourhood_scores (T+C+recall, k=5,15,30) "
                f"{t_ours:.2f} s (best of {repeats}: {', '.join(f'{t:.2f}' for _, t in runs)})")
        if n <= sklearn_limit:
            start = time.perf_counter()
            sk = {k: (sk_trust(X, Y, n_neighbors=k), sk_trust(Y, X, n_neighbors=k)) for k in ks}
            t_sk = time.perf_counter() - start
            gap = max(max(abs(sk[k][0] - ours["trustworthiness"][q]),
                          abs(sk[k][1] - ours["continuity"][q])) for q, k in enumerate(ks))
            assert gap <= 1e-12, f"neighbourhood_scores differs from scikit-learn by {gap:.3g}"
            line += (f"; sklearn (6 calls) {t_sk:.2f} s; speed-up {t_sk / t_ours:.1f}x; "
                     f"largest difference {gap:.1e}")
        print(f"{line}; peak RSS {_peak_rss_gb():.2f} GB", flush=True)


def part_large(n: int, d: int) -> None:
    from drfidelity.metrics import Reference

    X, truth, labels = _dataset(n, d)
    reference, build = _timed(Reference, X, truth=truth, labels=labels, per_point=True)
    print(f"large N={n} D={d}: Reference {build:.1f} s; peak RSS {_peak_rss_gb():.2f} GB",
          flush=True)
    row, t_score = _timed(reference.score, _embedding(X, 0))
    print(f"large N={n} D={d}: score {t_score:.1f} s ({len(row)} columns); "
          f"peak RSS {_peak_rss_gb():.2f} GB")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", choices=("score", "neighbours", "large"))
    parser.add_argument("--n", type=int, nargs="+",
                        help="number of points (several for neighbours)")
    parser.add_argument("--d", type=int, help="ambient dimension")
    parser.add_argument("--repeats", type=int,
                        help="embeddings scored in part 'score' (default 5); engine runs per N "
                             "in part 'neighbours', best reported (default 3)")
    parser.add_argument("--sklearn-limit", type=int, default=10000,
                        help="largest N at which scikit-learn is timed too")
    parser.add_argument("--numerics", choices=runtime.MODES, default="exact")
    args = parser.parse_args(argv)
    runtime.configure(args.numerics)
    print(f"numerics: {runtime.current_mode()}")
    if args.part == "score":
        part_score((args.n or [1000])[0], args.d or 768, args.repeats or 5)
    elif args.part == "neighbours":
        part_neighbours(args.n or [1000, 5000, 10000], args.d or 50, args.sklearn_limit,
                        args.repeats or 3)
    else:
        part_large((args.n or [20000])[0], args.d or 50)
    return 0


if __name__ == "__main__":
    sys.exit(main())
