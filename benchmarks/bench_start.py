"""Start-up costs: fresh processes with an empty and with a warm numba cache, side by side.

  python benchmarks/bench_start.py all     [--n 1000] [--d 768] [--anchor-maps 16]
  python benchmarks/bench_start.py score   # a fresh `drfidelity score`, and a wrong-shape map
  python benchmarks/bench_start.py maps    # one fresh process scoring a dataset's 16 maps
  python benchmarks/bench_start.py umap    # where a fresh UMAP worker's time goes

Every timing is the wall time of a fresh interpreter (``subprocess.run``), so it includes the
interpreter start, the imports and whatever numba compiles. "cold" runs get an empty
NUMBA_CACHE_DIR, "warm" ones the same folder after ``python -m drfidelity.metrics.warm`` (the
last step of tools/setup-env.sh) or after a first run filled it.

* ``score``: ``drfidelity score data.npz map.npy --json row.json`` (fast numerics, the CLI's
  default) on an N-point dataset (X, truth, labels); then the same command with a map of N - 1
  rows, which must be refused.
* ``maps``: one process builds the dataset's ``Reference`` and scores 16 maps (exact numerics,
  as the pipeline's score stage), against the previous release's ``compute_all`` on the same
  inputs in a fresh process of its own (its code imported from bench_metrics.ANCHOR; skipped
  with a reason when absent). ``--anchor-maps`` (default 16) maps are timed there; with fewer,
  the per-dataset time is its import plus 16 times its median per map.
* ``umap``: ``drfidelity.methods.umap.fit_umap`` on N points in fresh processes: its numba
  compile time (numba's compile events, split by the library the compiled function belongs
  to), as umap-learn and pynndescent ship (only some pynndescent functions have cache=True),
  and with every umap/pynndescent function's cache turned on, each with an empty cache and
  then a warm one; and a second fit (seed 1) in the same process, which is what a long-lived
  warm worker pays. The table's fresh-process time ends with the first fit (the wall time
  less the second fit). The embeddings' bytes are compared across all runs of seed 0.

Data are bench_metrics' synthetic clusters (the same generator as the engine's anchor).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_metrics import ANCHOR, _dataset, _embedding  # also puts src/ on sys.path

from drfidelity.core import runtime  # noqa: E402 - after bench_metrics' sys.path entry

MAPS = 16
BIN = Path(sys.executable).parent


def _wall(command: list, env: dict, expect: int = 0) -> tuple[float, str]:
    """(wall seconds, stdout) of one fresh process; it must exit with ``expect``."""
    start = time.perf_counter()
    done = subprocess.run([str(c) for c in command], capture_output=True, text=True, env=env)
    seconds = time.perf_counter() - start
    if done.returncode != expect:
        raise SystemExit(f"{command} exited {done.returncode}, expected {expect}:\n"
                         f"{done.stdout}\n{done.stderr}")
    return seconds, done.stdout if expect == 0 else done.stderr


def _env(cache: Path) -> dict:
    return {**os.environ, "NUMBA_CACHE_DIR": str(cache)}


def _write_inputs(folder: Path, n: int, d: int) -> None:
    import numpy as np

    X, truth, labels = _dataset(n, d)
    np.savez(folder / "data.npz", X=X, X_truth=truth, labels=labels)
    for seed in range(MAPS):
        np.save(folder / f"map{seed:02d}.npy", _embedding(X, seed))
    np.save(folder / "wrong.npy", _embedding(X, 0)[:-1])


def part_score(folder: Path) -> dict:
    score = [BIN / "drfidelity", "score", folder / "data.npz", folder / "map00.npy",
             "--json", folder / "row.json"]
    refuse = [BIN / "drfidelity", "score", folder / "data.npz", folder / "wrong.npy"]
    cold_cache, warm_cache = folder / "cache-cold", folder / "cache-warm"
    result = {"refuse_cold": _wall(refuse, _env(cold_cache), expect=2)[0],
              "score_cold": _wall(score, _env(cold_cache))[0]}
    result["warm_up"], line = _wall([sys.executable, "-m", "drfidelity.metrics.warm"],
                                    _env(warm_cache))
    print(line.strip(), flush=True)
    result["score_warm"] = statistics.median(_wall(score, _env(warm_cache))[0]
                                             for _ in range(3))
    refusals = [_wall(refuse, _env(warm_cache), expect=2) for _ in range(3)]
    result["refuse_warm"] = statistics.median(seconds for seconds, _ in refusals)
    print(f"refusal: {refusals[0][1].strip()}", flush=True)
    print("score: " + ", ".join(f"{key} {value:.2f} s" for key, value in result.items()),
          flush=True)
    return result


def child_maps(folder: Path) -> None:
    """One process: Reference + 16 scores; prints its own split as JSON."""
    start = time.perf_counter()
    runtime.configure("exact")
    import numpy as np

    from drfidelity.metrics import Reference
    from drfidelity.metrics.jit import cache_stats

    imported = time.perf_counter()
    with np.load(folder / "data.npz") as data:
        reference = Reference(data["X"], truth=data["X_truth"], labels=data["labels"])
    built = time.perf_counter()
    times = []
    for seed in range(MAPS):
        Y = np.load(folder / f"map{seed:02d}.npy")
        begin = time.perf_counter()
        reference.score(Y)
        times.append(time.perf_counter() - begin)
    print(json.dumps({"import": imported - start, "reference": built - imported,
                      "first_map": times[0], "later_maps": sum(times[1:]), **cache_stats()}))


def child_anchor(folder: Path, maps: int) -> None:
    """One process: the previous release's compute_all on ``maps`` of the 16 maps."""
    start = time.perf_counter()
    runtime.configure("exact")
    import numpy as np

    sys.path.insert(0, str(ANCHOR))
    from metrics import compute_all  # the v1.3.0 package, imported from outside the repo

    imported = time.perf_counter()
    with np.load(folder / "data.npz") as data:
        X, truth, labels = data["X"], data["X_truth"], data["labels"]
    times = []
    for seed in range(maps):
        Y = np.load(folder / f"map{seed:02d}.npy")
        begin = time.perf_counter()
        compute_all(X, Y, X_truth=truth, labels=labels)
        times.append(time.perf_counter() - begin)
    print(json.dumps({"import": imported - start, "maps": times}))


def part_maps(folder: Path, anchor_maps: int) -> dict:
    me = [sys.executable, __file__]
    cache = folder / "cache-maps"
    result = {}
    for state in ("cold", "warm"):
        wall, out = _wall(me + ["child-maps", folder], _env(cache))
        split = json.loads(out.strip().splitlines()[-1])
        result[state] = {"wall": wall, **split}
        print(f"maps {state}: {MAPS} maps in one fresh process {wall:.2f} s wall (import "
              f"{split['import']:.2f} s, Reference {split['reference']:.2f} s, first map "
              f"{split['first_map']:.2f} s, other {MAPS - 1} maps {split['later_maps']:.2f} s; "
              f"kernels compiled {split['compiled']}, loaded {split['loaded']})", flush=True)
    if not (ANCHOR / "metrics" / "compute.py").is_file():
        print(f"anchor skipped: the previous release's code is not at {ANCHOR}")
        result["anchor"] = {"skipped": f"no anchor at {ANCHOR}"}
        return result
    wall, out = _wall(me + ["child-anchor", folder, "--anchor-maps", anchor_maps],
                      _env(cache))
    split = json.loads(out.strip().splitlines()[-1])
    per_map = statistics.median(split["maps"])
    per_dataset = wall if anchor_maps == MAPS else split["import"] + MAPS * per_map
    result["anchor"] = {"wall": wall, "per_map": per_map, "per_dataset": per_dataset,
                        "timed_maps": anchor_maps}
    print(f"anchor: v1.3.0 compute_all, fresh process, {anchor_maps} maps {wall:.1f} s wall "
          f"(import {split['import']:.2f} s, median {per_map:.2f} s per map); per dataset of "
          f"{MAPS} maps {per_dataset:.1f} s; ours / anchor: cold "
          f"{per_dataset / result['cold']['wall']:.1f}x, warm "
          f"{per_dataset / result['warm']['wall']:.1f}x", flush=True)
    return result


def _compile_seconds(records) -> dict:
    """numba compile seconds by library, from numba's "numba:compile" events: each function's
    own time (a compile nested inside another is its own library's, not the outer one's)."""
    from numba.core import event

    totals: dict = {}
    stack = []  # [library, start, seconds of nested compiles]
    for stamp, ev in records:
        if ev.status == event.EventStatus.START:
            stack.append([ev.data["dispatcher"].py_func.__module__.split(".")[0], stamp, 0.0])
            continue
        library, begin, nested = stack.pop()
        totals[library] = totals.get(library, 0.0) + (stamp - begin) - nested
        if stack:
            stack[-1][2] += stamp - begin
    return totals


def _library_dispatchers():
    from numba.core.registry import CPUDispatcher

    found = {}
    for name, module in list(sys.modules.items()):
        if name.split(".")[0] in ("umap", "pynndescent") and module is not None:
            for value in vars(module).values():
                if isinstance(value, CPUDispatcher):
                    found[id(value)] = value
    return list(found.values())


def child_umap(n: int, d: int, cache_all: bool) -> None:
    """One process: import, fit_umap(seed 0), fit_umap(seed 1); JSON split on stdout."""
    start = time.perf_counter()
    runtime.configure("exact")
    import hashlib

    from numba.core import event

    with event.install_recorder("numba:compile") as import_compiles:
        from drfidelity.registry import METHODS
        from drfidelity.methods.umap import fit_umap

        import umap  # noqa: F401 - fit_umap imports it on first use; timed here instead
    imported = time.perf_counter()
    dispatchers = _library_dispatchers()
    if cache_all:
        for dispatcher in dispatchers:
            dispatcher.enable_caching()
    X, _, _ = _dataset(n, d)
    with event.install_recorder("numba:compile") as first_compiles:
        begin = time.perf_counter()
        Y0 = fit_umap(X, 0, **METHODS["UMAP"].defaults)
        first = time.perf_counter() - begin
    with event.install_recorder("numba:compile") as second_compiles:
        begin = time.perf_counter()
        fit_umap(X, 1, **METHODS["UMAP"].defaults)
        second = time.perf_counter() - begin
    hits = sum(sum(k.stats.cache_hits.values()) for k in dispatchers)
    misses = sum(sum(k.stats.cache_misses.values()) for k in dispatchers)
    print(json.dumps({"import": imported - start, "first_fit": first, "second_fit": second,
                      "compile_import": _compile_seconds(import_compiles.buffer),
                      "compile_first": _compile_seconds(first_compiles.buffer),
                      "compile_second": _compile_seconds(second_compiles.buffer),
                      "loaded": hits, "compiled": misses,
                      "cached_functions": sum(not type(k._cache).__name__ == "NullCache"
                                              for k in dispatchers),
                      "functions": len(dispatchers),
                      "bytes": hashlib.sha256(Y0.tobytes()).hexdigest()}))


def _by_library(seconds: dict) -> str:
    return ", ".join(f"{lib} {value:.1f} s" for lib, value in sorted(seconds.items())) or "none"


def part_umap(folder: Path, n: int, d: int) -> dict:
    me = [sys.executable, __file__, "child-umap", "--n", n, "--d", d]
    result = {}
    for setting, extra in (("as shipped", []), ("all cached", ["--cache-all"])):
        cache = folder / f"cache-umap-{'all' if extra else 'shipped'}"
        for state in ("cold", "warm"):
            wall, out = _wall(me + extra, _env(cache))
            split = json.loads(out.strip().splitlines()[-1])
            result[f"{setting}, {state}"] = {"wall": wall, **split}
            print(f"umap {setting}, {state} cache: fresh process {wall:.1f} s wall (import "
                  f"{split['import']:.1f} s, compiling {_by_library(split['compile_import'])}; "
                  f"first fit {split['first_fit']:.1f} s, compiling "
                  f"{_by_library(split['compile_first'])}; second fit in the same process "
                  f"{split['second_fit']:.2f} s, compiling "
                  f"{_by_library(split['compile_second'])}); {split['cached_functions']} of "
                  f"{split['functions']} functions cached, {split['compiled']} signatures "
                  f"compiled, {split['loaded']} loaded", flush=True)
    same = len({run["bytes"] for run in result.values()}) == 1
    print(f"umap: seed-0 embedding bytes identical across all runs: {same}", flush=True)
    result["identical"] = same
    return result


def _table(score: dict | None, maps: dict | None, umap_runs: dict | None, n: int) -> None:
    print()
    print("| measured (fresh processes) | empty numba cache | warm cache | goal |")
    print("|---|---|---|---|")
    if score:
        print(f"| `drfidelity score`, N = {n} | {score['score_cold']:.1f} s | "
              f"{score['score_warm']:.1f} s (warm-up {score['warm_up']:.1f} s, once) | <= 3 s |")
        print(f"| wrong-shape map refused | {score['refuse_cold']:.1f} s | "
              f"{score['refuse_warm']:.1f} s | <= 3 s |")
    if maps:
        anchor = maps["anchor"]
        if "skipped" in anchor:
            ratio = f"anchor skipped: {anchor['skipped']}"
            print(f"| {MAPS} maps, one process | {maps['cold']['wall']:.1f} s | "
                  f"{maps['warm']['wall']:.1f} s | {ratio} |")
        else:
            per = anchor["per_dataset"]
            print(f"| {MAPS} maps, one process, vs v1.3.0 `compute_all` ({per:.0f} s) | "
                  f"{maps['cold']['wall']:.1f} s = {per / maps['cold']['wall']:.1f}x | "
                  f"{maps['warm']['wall']:.1f} s = {per / maps['warm']['wall']:.1f}x | "
                  f">= 14x |")
    if umap_runs:
        runs = [run for key, run in umap_runs.items() if key != "identical"]
        for setting in ("as shipped", "all cached"):
            cold, warm = umap_runs[f"{setting}, cold"], umap_runs[f"{setting}, warm"]
            print(f"| fresh process to the end of one UMAP fit, N = {n} ({setting}) | "
                  f"{cold['wall'] - cold['second_fit']:.1f} s | "
                  f"{warm['wall'] - warm['second_fit']:.1f} s | - |")
        worker = statistics.median(run["second_fit"] for run in runs)
        print(f"| the same fit in a long-lived warm process (median of {len(runs)}) | - | "
              f"{worker:.1f} s | - |")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("part", choices=("all", "score", "maps", "umap", "child-maps",
                                         "child-anchor", "child-umap"))
    parser.add_argument("folder", nargs="?", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--n", type=int, default=1000, help="points (default 1000)")
    parser.add_argument("--d", type=int, default=768, help="ambient dimension (default 768)")
    parser.add_argument("--anchor-maps", type=int, default=MAPS,
                        help=f"maps the previous release scores (default {MAPS})")
    parser.add_argument("--cache-all", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.part == "child-maps":
        child_maps(args.folder)
        return 0
    if args.part == "child-anchor":
        child_anchor(args.folder, args.anchor_maps)
        return 0
    if args.part == "child-umap":
        child_umap(args.n, args.d, args.cache_all)
        return 0
    runtime.configure("exact")  # the inputs are written with the pipeline's numerics
    with tempfile.TemporaryDirectory(prefix="bench-start-") as tmp:
        folder = Path(tmp)
        _write_inputs(folder, args.n, args.d)
        print(f"N = {args.n}, D = {args.d}; load average {os.getloadavg()[0]:.1f}", flush=True)
        score = part_score(folder) if args.part in ("all", "score") else None
        maps = part_maps(folder, args.anchor_maps) if args.part in ("all", "maps") else None
        umap_runs = part_umap(folder, args.n, args.d) if args.part in ("all", "umap") else None
        _table(score, maps, umap_runs, args.n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
