"""The engine's numba kernels, compiled once per machine: :func:`kernel` is ``njit`` with an
on-disk cache that lives outside the source tree.

Why not ``njit(cache=True)``: numba writes its cache next to the source when it can
(``metrics/__pycache__``), and in a checkout that folder lies inside the directories the DVC
stages depend on, so the first score would change their hashes. Here every kernel of a source
file is cached in ``$NUMBA_CACHE_DIR`` or else numba's user-wide cache folder
(``$XDG_CACHE_HOME/numba``, by default ``~/.cache/numba``), in a folder named after the file
and the SHA-256 of its bytes. So every copy of the same source (worktrees, test workspaces, a
read-only install, a container's bind mount) shares one compile, and an edited file never
reads another version's code; numba itself also checks the file's hash, its own version, the
Python version and the CPU (name and features) before it loads a kernel, so a loaded kernel is
the machine code a fresh compile on this machine would give. The kernels call only kernels of
their own file, so a file's hash covers all the code they contain. Where no cache folder is
writable, kernels are compiled in each process, as without a cache.
"""

from __future__ import annotations

import functools
import hashlib
import os

from numba import njit
from numba.core import caching, config
from numba.misc.appdirs import AppDirs

KERNELS: list = []  # every dispatcher made by :func:`kernel`, in definition order


def cache_root() -> str:
    """``$NUMBA_CACHE_DIR`` when set, else numba's user-wide cache folder."""
    return config.CACHE_DIR or AppDirs(appname="numba", appauthor=False).user_cache_dir


@functools.lru_cache(maxsize=None)
def _source_folder(py_file: str) -> str:
    with open(py_file, "rb") as handle:
        digest = hashlib.sha256(handle.read()).hexdigest()
    stem = os.path.splitext(os.path.basename(py_file))[0]
    return os.path.join(cache_root(), f"drfidelity-{stem}-{digest[:20]}")


class _SourceHashLocator(caching._SourceFileBackedLocatorMixin, caching._CacheLocator):
    """Cache folder named after the source file's content, not its path."""

    def __init__(self, py_func, py_file):
        self._py_file = py_file
        self._lineno = py_func.__code__.co_firstlineno
        self._cache_path = _source_folder(py_file)

    def get_cache_path(self):
        return self._cache_path


class _SourceHashImpl(caching.CompileResultCacheImpl):
    _locator_classes = [_SourceHashLocator]


class _SourceHashCache(caching.FunctionCache):
    _impl_class = _SourceHashImpl


def kernel(**options):
    """``numba.njit(**options)``, cached on disk under :func:`cache_root` (see the module)."""
    def decorate(function):
        dispatcher = njit(cache=False, **options)(function)
        try:
            dispatcher._cache = _SourceHashCache(function)  # what njit(cache=True) sets
        except RuntimeError:  # numba found no writable cache folder
            pass
        KERNELS.append(dispatcher)
        return dispatcher
    return decorate


def cached() -> bool:
    """Whether every kernel has a writable disk cache (else each process compiles them)."""
    return all(not isinstance(k._cache, caching.NullCache) for k in KERNELS)


def cache_stats() -> dict[str, int]:
    """Signatures loaded from the disk cache and compiled, over every kernel, in this process."""
    hits = sum(sum(k.stats.cache_hits.values()) for k in KERNELS)
    misses = sum(sum(k.stats.cache_misses.values()) for k in KERNELS)
    return {"loaded": hits, "compiled": misses}
