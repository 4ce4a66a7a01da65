"""Timings and peak memory of the metric engine.

  python benchmarks/bench_metrics.py targets                           # issue 12: all three
  python benchmarks/bench_metrics.py anchor     [--n 1000] [--d 768]   # 1: vs v1.3.0 compute_all
  python benchmarks/bench_metrics.py sklearn    [--n 10000] [--d 50]   # 2: vs sklearn, peak RSS
  python benchmarks/bench_metrics.py large      [--n 20000] [--d 50]   # 3: whole score, big N
  python benchmarks/bench_metrics.py score      [--n 1000] [--d 768]   # full row, one map
  python benchmarks/bench_metrics.py neighbours [--n 1000 5000 10000] [--n-jobs 2]  # vs sklearn
  add --numerics fast for the machine's own kernels (default: exact, as in the pipeline).

The engine's pair passes (sort, subset sums, band stress) and its neighbour row blocks run on
``$DRFIDELITY_METRIC_THREADS`` threads (default: the usable cores); set it to 1 to time one
core. The values do not depend on it. Every part prints the thread count it ran with.

``targets`` runs ``anchor``, ``sklearn`` and ``large`` each in a fresh interpreter (so that each
peak RSS is its own), then prints one Markdown table of the three ratios. ``anchor`` imports the
previous release's code from ANCHOR (outside the repository, never copied into it) and is
skipped with a printed reason when that folder is absent.

Data are synthetic: clusters in a 10-dim latent space mapped into D dims plus noise, labels =
cluster ids, truth = the noise-free points, embeddings = a noisy linear map to 2-D. Each part
prints its timings and the process's peak RSS (``resource.getrusage``). Part (b) times the
public ``drfidelity.metrics.neighbourhood_scores`` side by side with scikit-learn in one process:
it first compiles the numba kernels on a tiny input and prints that once-per-process cost; its
timings are warm, best of --repeats runs (scikit-learn runs once).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "src"))
from drfidelity.core import runtime  # noqa: E402

ANCHOR = Path(os.environ.get("DRFIDELITY_ANCHOR", "/work/shared/anchors/upstream_v1.3.0"))
RESULT = "RESULT "  # prefix of the one JSON line per part that ``targets`` collects


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


def part_neighbours(sizes: list[int], d: int, sklearn_limit: int, repeats: int,
                    n_jobs: int | None = None) -> None:
    """The public ``neighbourhood_scores`` (T, C, recall at k = 5, 15, 30 in one call) against
    six ``sklearn.manifold.trustworthiness`` calls (T and C at three k), same process, same data;
    the values must agree to 1e-12. ``n_jobs`` is passed to ``neighbourhood_scores``."""
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
        runs = [_timed(neighbourhood_scores, X, Y, k=ks, n_jobs=n_jobs) for _ in range(repeats)]
        ours, t_ours = runs[0][0], min(t for _, t in runs)
        line = (f"neighbours N={n} D={d}: neighbourhood_scores (T+C+recall, k=5,15,30, "
                f"n_jobs={n_jobs}) "
                f"{t_ours:.2f} s (best of {repeats}: {', '.join(f'{t:.2f}' for _, t in runs)})")
        if n <= sklearn_limit:
            start = time.perf_counter()
            sk = {k: (sk_trust(X, Y, n_neighbors=k), sk_trust(Y, X, n_neighbors=k)) for k in ks}
            t_sk = time.perf_counter() - start
            gap = max(max(abs(sk[k][0] - ours[f"trust_k{k}"]), abs(sk[k][1] - ours[f"cont_k{k}"]))
                      for k in ks)
            assert gap <= 1e-12, f"neighbourhood_scores differs from scikit-learn by {gap:.3g}"
            line += (f"; sklearn (6 calls) {t_sk:.2f} s; speed-up {t_sk / t_ours:.1f}x; "
                     f"largest difference {gap:.1e}")
        print(f"{line}; peak RSS {_peak_rss_gb():.2f} GB", flush=True)


def _warm_up() -> float:
    """Compile the numba kernels on a tiny input (a once-per-process cost); its seconds."""
    from drfidelity.metrics import Reference

    X, truth, labels = _dataset(60, 12)
    start = time.perf_counter()
    Reference(X, truth=truth, labels=labels).score(_embedding(X, 0))
    return time.perf_counter() - start


def _report(part: str, **values) -> None:
    print(RESULT + json.dumps({"part": part, **values}), flush=True)


def part_anchor(n: int, d: int, repeats: int) -> None:
    """Target 1: the full canonical column set per map (truth, labels, per-point), ours
    against the previous release's ``compute_all``, side by side on the same inputs."""
    if not (ANCHOR / "metrics" / "compute.py").is_file():
        print(f"anchor skipped: the previous release's code is not at {ANCHOR}")
        _report("anchor", skipped=f"no anchor at {ANCHOR}")
        return
    import numpy as np

    sys.path.insert(0, str(ANCHOR))
    from metrics import compute_all  # the v1.3.0 package, imported from outside the repo

    from drfidelity.metrics import Reference

    jit = _warm_up()
    X, truth, labels = _dataset(n, d)
    maps = [_embedding(X, seed) for seed in range(repeats)]
    reference, build = _timed(Reference, X, truth=truth, labels=labels, per_point=True)
    ours, t_ours = zip(*[_timed(reference.score, Y) for Y in maps])
    old, t_old = zip(*[_timed(compute_all, X, Y, X_truth=truth, labels=labels) for Y in maps])
    gap = max(abs(a[key] - b[key]) for a, b in zip(ours, old) for key in b
              if np.isfinite(b[key]))
    ours_map, old_map = float(np.median(t_ours)), float(np.median(t_old))
    print(f"anchor N={n} D={d}: {len(ours[0])} columns; JIT {jit:.2f} s; Reference {build:.3f} s; "
          f"score per map median {ours_map:.3f} s ({', '.join(f'{t:.3f}' for t in t_ours)}); "
          f"v1.3.0 compute_all median {old_map:.3f} s "
          f"({', '.join(f'{t:.3f}' for t in t_old)}); speed-up per map {old_map / ours_map:.1f}x, "
          f"Reference + one map {old_map / (build + ours_map):.1f}x; largest difference "
          f"{gap:.1e}; peak RSS {_peak_rss_gb():.2f} GB")
    _report("anchor", n=n, d=d, ours_map=ours_map, reference=build, anchor_map=old_map,
            ratio=old_map / ours_map, ratio_with_reference=old_map / (build + ours_map),
            gap=gap, maps=repeats)


def part_sklearn(n: int, d: int) -> None:
    """Target 2: ``Reference(X)`` + one ``score(Y)`` against one scikit-learn
    ``trustworthiness(X, Y, n_neighbors=15)``; our peak RSS is read before sklearn runs."""
    from sklearn.manifold import trustworthiness as sk_trust

    from drfidelity.metrics import Reference

    jit = _warm_up()
    X, _, _ = _dataset(n, d)
    Y = _embedding(X, 0)
    start = time.perf_counter()
    reference = Reference(X)
    build = time.perf_counter() - start
    row = reference.score(Y)
    ours = time.perf_counter() - start
    peak = _peak_rss_gb()
    sk, t_sk = _timed(sk_trust, X, Y, n_neighbors=15)
    gap = abs(sk - row["trust_k15"])
    print(f"sklearn N={n} D={d}: JIT {jit:.2f} s; Reference {build:.1f} s + score "
          f"{ours - build:.1f} s = {ours:.1f} s ({len(row)} columns); peak RSS {peak:.2f} GB; "
          f"sklearn trustworthiness(k=15) {t_sk:.1f} s; ours / sklearn {ours / t_sk:.2f}; "
          f"trust_k15 difference {gap:.1e}")
    _report("sklearn", n=n, d=d, reference=build, score=ours - build, ours=ours, sklearn=t_sk,
            ratio=ours / t_sk, peak_gb=peak, gap=gap)


def part_large(n: int, d: int) -> None:
    """Target 3: the whole canonical set (truth, labels, per-point) at large N."""
    from drfidelity.metrics import Reference

    jit = _warm_up()
    X, truth, labels = _dataset(n, d)
    reference, build = _timed(Reference, X, truth=truth, labels=labels, per_point=True)
    after_reference = _peak_rss_gb()
    print(f"large N={n} D={d}: JIT {jit:.2f} s; Reference {build:.1f} s; "
          f"peak RSS {after_reference:.2f} GB", flush=True)
    row, t_score = _timed(reference.score, _embedding(X, 0))
    peak = _peak_rss_gb()
    print(f"large N={n} D={d}: score {t_score:.1f} s ({len(row)} columns); "
          f"peak RSS {peak:.2f} GB")
    _report("large", n=n, d=d, reference=build, score=t_score, peak_gb=peak,
            peak_after_reference_gb=after_reference)


def part_targets(numerics: str) -> None:
    """Each target in its own interpreter, then one Markdown table of the measured ratios."""
    results = {}
    for part in ("anchor", "sklearn", "large"):
        command = [sys.executable, __file__, part, "--numerics", numerics]
        print("$", " ".join(command[1:]), flush=True)
        lines = subprocess.run(command, check=True, capture_output=True, text=True).stdout
        for line in lines.splitlines():
            if line.startswith(RESULT):
                results[part] = json.loads(line[len(RESULT):])
            else:
                print(line, flush=True)
    print()
    print("| target | measured | goal | met |")
    print("|---|---|---|---|")
    one = results.get("anchor", {})
    if "skipped" in one or not one:
        print(f"| 1. full canonical set per map, N = 1000 | skipped: {one.get('skipped')} "
              "| >= 14x v1.3.0 | - |")
    else:
        print(f"| 1. full canonical set per map, N = {one['n']}, D = {one['d']} | "
              f"{one['ratio']:.1f}x faster than v1.3.0 `compute_all` ({one['ours_map']:.3f} s vs "
              f"{one['anchor_map']:.2f} s per map; with the one-off `Reference` "
              f"{one['ratio_with_reference']:.1f}x) | >= 14x | "
              f"{'yes' if one['ratio'] >= 14 else 'no'} |")
    two = results["sklearn"]
    print(f"| 2. `Reference(X)` + one `score`, N = {two['n']}, D = {two['d']} | "
          f"{two['ratio']:.2f}x one sklearn `trustworthiness` ({two['ours']:.1f} s vs "
          f"{two['sklearn']:.1f} s); peak RSS {two['peak_gb']:.2f} GiB | <= 3x, <= 4 GB | "
          f"{'yes' if two['ratio'] <= 3 and two['peak_gb'] <= 4 else 'no'} |")
    three = results["large"]
    print(f"| 3. whole canonical set, N = {three['n']}, D = {three['d']} | peak RSS "
          f"{three['peak_gb']:.2f} GiB (Reference {three['reference']:.0f} s, score "
          f"{three['score']:.0f} s) | <= 8 GB | {'yes' if three['peak_gb'] <= 8 else 'no'} |")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", choices=("targets", "anchor", "sklearn", "large", "score",
                                         "neighbours"))
    parser.add_argument("--n", type=int, nargs="+",
                        help="number of points (several for neighbours)")
    parser.add_argument("--d", type=int, help="ambient dimension")
    parser.add_argument("--repeats", type=int,
                        help="embeddings scored in parts 'score' (default 5) and 'anchor' "
                             "(default 3); engine runs per N in part 'neighbours', best "
                             "reported (default 3)")
    parser.add_argument("--sklearn-limit", type=int, default=10000,
                        help="largest N at which scikit-learn is timed too")
    parser.add_argument("--n-jobs", type=int, help="n_jobs of neighbourhood_scores in part "
                        "'neighbours' (default None: one thread, as in scikit-learn)")
    parser.add_argument("--numerics", choices=runtime.MODES, default="exact")
    args = parser.parse_args(argv)
    runtime.configure(args.numerics)
    from drfidelity.metrics.pair_kernels import threads
    print(f"numerics: {runtime.current_mode()}; engine threads: {threads()}")
    if args.part == "targets":
        part_targets(args.numerics)
    elif args.part == "anchor":
        part_anchor((args.n or [1000])[0], args.d or 768, args.repeats or 3)
    elif args.part == "sklearn":
        part_sklearn((args.n or [10000])[0], args.d or 50)
    elif args.part == "score":
        part_score((args.n or [1000])[0], args.d or 768, args.repeats or 5)
    elif args.part == "neighbours":
        part_neighbours(args.n or [1000, 5000, 10000], args.d or 50, args.sklearn_limit,
                        args.repeats or 3, args.n_jobs)
    else:
        part_large((args.n or [20000])[0], args.d or 50)
    return 0


if __name__ == "__main__":
    sys.exit(main())
