"""The engine's compiled kernels are cached on disk outside the source tree (a read-only install
too) and a kernel loaded from that cache gives the same bytes as a fresh compile.

Each run is a fresh interpreter with its own HOME / NUMBA_CACHE_DIR, so what it finds on disk
is only what the runs before it wrote.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys

import pytest

from pipeline_helpers import REPO

# One warm-up row (exact numerics) and what the process compiled or loaded; the row's bytes
# are the float64 values in column order.
PROBE = """
import json, sys
from drfidelity.core import runtime
runtime.configure(sys.argv[1])
import numpy as np
import drfidelity
from drfidelity.metrics.jit import cache_stats
from drfidelity.metrics.warm import warm_up
row = warm_up()
print(json.dumps({"package": drfidelity.__file__, "columns": list(row),
                  "bytes": np.array(list(row.values()), dtype=np.float64).tobytes().hex(),
                  **cache_stats()}))
"""


def _probe(env: dict, numerics: str = "exact", path: str | None = None) -> dict:
    env = {key: value for key, value in env.items() if value is not None}
    if path is not None:
        env["PYTHONPATH"] = path
    done = subprocess.run([sys.executable, "-c", PROBE, numerics], capture_output=True,
                          text=True, timeout=1800, env=env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _environment(home, cache_dir=None) -> dict:
    env = {key: value for key, value in os.environ.items()
           if key not in ("NUMBA_CACHE_DIR", "XDG_CACHE_HOME", "PYTHONPATH")}
    env["HOME"] = str(home)
    if cache_dir is not None:
        env["NUMBA_CACHE_DIR"] = str(cache_dir)
    return env


def _cache_files(root) -> list:
    return sorted(p.relative_to(root) for p in root.rglob("*") if p.suffix in (".nbi", ".nbc"))


def _read_only_copy(tmp_path):
    """The package copied to a folder nobody may write to, as a system install would be."""
    site = tmp_path / "site"
    shutil.copytree(REPO / "src" / "drfidelity", site / "drfidelity",
                    ignore=shutil.ignore_patterns("__pycache__"))
    for path in [site, *site.rglob("*")]:
        mode = path.stat().st_mode
        path.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))
    return site


@pytest.fixture(scope="module")
def read_only_runs(tmp_path_factory):
    """A read-only copy of the package run twice with an empty HOME: (HOME, cold, warm)."""
    tmp_path = tmp_path_factory.mktemp("read-only")
    site = _read_only_copy(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    try:
        cold = _probe(_environment(home), path=str(site))
        assert not [p for p in site.rglob("*") if p.suffix in (".nbi", ".nbc")]
        written = _cache_files(home)
        warm = _probe(_environment(home), path=str(site))
        assert _cache_files(home) == written  # nothing new: every kernel was found
    finally:
        for path in [site, *site.rglob("*")]:
            path.chmod(path.stat().st_mode | stat.S_IWUSR)
    assert cold["package"].startswith(str(site)) and warm["package"] == cold["package"]
    return home, cold, warm


def test_a_read_only_install_caches_its_kernels_and_loads_the_same_bytes(read_only_runs):
    home, cold, warm = read_only_runs
    assert cold["compiled"] > 0 and cold["loaded"] == 0
    assert warm["compiled"] == 0 and warm["loaded"] > 0
    assert (warm["columns"], warm["bytes"]) == (cold["columns"], cold["bytes"])
    user_cache = home / ".cache" / "numba"  # numba's user-wide folder, without NUMBA_CACHE_DIR
    assert {p.parts[0].rsplit("-", 1)[0] for p in _cache_files(user_cache)} == {
        "drfidelity-distances", "drfidelity-pair_kernels", "drfidelity-rank_kernels"}


def test_every_copy_of_the_same_source_shares_the_kernels(read_only_runs):
    """The checkout's own package (another path, same bytes) finds the kernels the read-only
    copy compiled, in either numeric mode, and writes nothing into the source tree."""
    home, cold, _ = read_only_runs
    checkout = _probe(_environment(home))
    assert checkout["package"].startswith(str(REPO / "src"))
    assert checkout["compiled"] == 0 and checkout["bytes"] == cold["bytes"]
    assert _probe(_environment(home), numerics="fast")["compiled"] == 0
    assert not [p for p in (REPO / "src").rglob("*") if p.suffix in (".nbi", ".nbc")]


def test_an_edited_kernel_file_is_compiled_again(read_only_runs, tmp_path):
    """NUMBA_CACHE_DIR wins over the user-wide folder; a changed source file gets a folder of
    its own, while the unchanged files' kernels are still loaded."""
    home, cold, warm = read_only_runs
    cache = tmp_path / "cache"
    shutil.copytree(home / ".cache" / "numba", cache)
    site = tmp_path / "site"
    shutil.copytree(REPO / "src" / "drfidelity", site / "drfidelity",
                    ignore=shutil.ignore_patterns("__pycache__"))
    kernels = site / "drfidelity" / "metrics" / "distances.py"
    kernels.write_text(kernels.read_text() + "\n# edited\n")
    other_home = tmp_path / "home"
    other_home.mkdir()
    edited = _probe(_environment(other_home, cache_dir=cache), path=str(site))
    from drfidelity.metrics import distances
    from drfidelity.metrics.jit import KERNELS

    own = sum(k.py_func.__module__ == distances.__name__ for k in KERNELS)  # one signature each
    assert edited["compiled"] == own and edited["loaded"] == warm["loaded"] - own
    assert edited["bytes"] == cold["bytes"]
    assert sorted(p.name.rsplit("-", 1)[0] for p in cache.iterdir()) == [
        "drfidelity-distances", "drfidelity-distances", "drfidelity-pair_kernels",
        "drfidelity-rank_kernels"]
    assert not (other_home / ".cache").exists()


def test_the_warm_up_command_says_what_it_compiled_and_where(read_only_runs, tmp_path):
    home, _, _ = read_only_runs
    done = subprocess.run([sys.executable, "-m", "drfidelity.metrics.warm"], capture_output=True,
                          text=True, timeout=1800, env=_environment(home))
    assert done.returncode == 0 and done.stderr == ""
    assert re.fullmatch(r"drfidelity: metric kernels ready in [0-9.]+ s \(0 compiled, [1-9]\d* "
                        rf"loaded from {re.escape(str(home / '.cache' / 'numba'))}\)\n",
                        done.stdout), done.stdout
    # no writable cache folder: the kernels still work, compiled per process, and it is known
    blocked = tmp_path / "a-file"
    blocked.write_text("")
    code = ("from drfidelity.metrics import pair_kernels, rank_kernels, distances; "
            "from drfidelity.metrics.jit import cached; print(cached())")
    env = _environment(home, cache_dir=blocked / "cache")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, env=env)
    assert done.stdout.split() == ["False"], done.stderr


@pytest.mark.slow
def test_fresh_compiles_in_empty_caches_and_a_warm_cache_give_the_same_bytes(tmp_path):
    """Two fresh compiles (distinct empty NUMBA_CACHE_DIRs) and a load from a warm cache."""
    home = tmp_path / "home"
    home.mkdir()
    runs = []
    for name in ("first", "second", "first"):
        runs.append(_probe(_environment(home, cache_dir=tmp_path / name)))
    assert [(r["compiled"] > 0, r["loaded"] > 0) for r in runs] == [(True, False),
                                                                    (True, False),
                                                                    (False, True)]
    assert len({(r["bytes"], tuple(r["columns"])) for r in runs}) == 1


def test_the_first_score_on_a_machine_says_it_compiles_and_the_next_says_nothing(tmp_path):
    """`drfidelity score` with an empty kernel cache names the wait before it (the kernels
    compile for about 15 s); with the cache filled, stderr stays empty."""
    import numpy as np

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 5))
    np.savez(tmp_path / "data.npz", X=X)
    np.save(tmp_path / "map.npy", X[:, :2])
    env = _environment(tmp_path / "home", tmp_path / "cache")
    command = [sys.executable, "-m", "drfidelity", "score", str(tmp_path / "data.npz"),
               str(tmp_path / "map.npy")]
    first = subprocess.run(command, capture_output=True, text=True, env=env, timeout=1800)
    assert first.returncode == 0, first.stderr
    assert first.stderr.startswith("drfidelity score: compiling the metric kernels for this "
                                   "machine, once (about 15 s;"), first.stderr
    again = subprocess.run(command, capture_output=True, text=True, env=env, timeout=1800)
    assert again.returncode == 0 and again.stderr == ""
    assert json.loads(again.stdout) == json.loads(first.stdout)


def test_a_damaged_cache_is_moved_aside_and_compiled_again(tmp_path):
    """Cache files that cannot be unpickled (here: an unknown pickle protocol, as a damaged
    disk gives) cost one line and a compile, never the score."""
    cache = tmp_path / "cache"
    env = _environment(tmp_path / "home", cache)
    first = _probe(env)
    assert first["compiled"] > 0
    for index in cache.rglob("*.nbi"):
        index.write_bytes(b"\x80\x6a" + index.read_bytes()[2:])  # "unsupported pickle protocol"
    done = subprocess.run([sys.executable, "-c", PROBE, "exact"], capture_output=True,
                          text=True, timeout=1800, env=env)
    assert done.returncode == 0, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and "cannot be read" in lines[0] and "compiling again" in lines[0]
    again = json.loads(done.stdout.strip().splitlines()[-1])
    assert again["bytes"] == first["bytes"] and again["compiled"] > 0
    assert list(cache.glob("*.damaged-*"))  # kept for a look, not deleted
    assert _probe(env)["compiled"] == 0  # the new cache serves the next process
