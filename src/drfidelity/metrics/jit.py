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
import sys

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

    def load_overload(self, sig, target_context):
        """The kernel from the disk cache; None (so numba compiles it) when a cache file cannot
        be read, e.g. damaged on disk, after moving its folder aside."""
        try:
            return super().load_overload(sig, target_context)
        except Exception as error:  # noqa: BLE001 - any unreadable file: compile instead
            _set_aside(self.cache_path, error)
            return None


_damage_said = False


def _set_aside(folder: str, error: Exception) -> None:
    """Move a damaged cache folder aside and start an empty one; one line on stderr per
    process, since every kernel of the folder meets the same damage."""
    global _damage_said
    aside = f"{folder}.damaged-{os.getpid()}"
    try:
        os.replace(folder, aside)
        os.makedirs(folder, exist_ok=True)
        where = f"moved aside to {aside}"
    except OSError:
        where = "left in place"
    if not _damage_said:
        _damage_said = True
        print(f"drfidelity: a compiled-kernel cache file in {folder} cannot be read "
              f"({type(error).__name__}: {error}); {where}, compiling again", file=sys.stderr)


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


#: wall seconds to compile every kernel on 2 cores (``python -m drfidelity.metrics.warm`` with an
#: empty cache: 12.9-16 s here), said before a call that compiles them
COMPILE_SECONDS = 15


def compiled_here() -> bool:
    """Whether every kernel file of the engine has compiled kernels in the disk cache; if not,
    the first call compiles them, a wait worth a word beforehand."""
    files = {dispatcher.py_func.__code__.co_filename for dispatcher in KERNELS}
    for py_file in files:
        folder = _source_folder(py_file)
        if not os.path.isdir(folder) or not any(n.endswith(".nbi") for n in os.listdir(folder)):
            return False
    return True


def cached() -> bool:
    """Whether every kernel has a writable disk cache (else each process compiles them)."""
    return all(not isinstance(k._cache, caching.NullCache) for k in KERNELS)


def cache_stats() -> dict[str, int]:
    """Signatures loaded from the disk cache and compiled, over every kernel, in this process."""
    hits = sum(sum(k.stats.cache_hits.values()) for k in KERNELS)
    misses = sum(sum(k.stats.cache_misses.values()) for k in KERNELS)
    return {"loaded": hits, "compiled": misses}
