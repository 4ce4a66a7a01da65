"""One thread inside a library call, whatever the process's thread variables say.

The stages start every job with one thread per call (:mod:`drfidelity.core.runtime` sets the
thread variables), but only when those variables are unset: a user may still choose more. For
the older methods that choice is theirs; the living benchmark's wrappers (PaCMAP, TriMap,
PHATE) hold their calls to one thread here, so that their maps are the same bytes at any thread
count. PHATE was measured to need it: with ``OPENBLAS_NUM_THREADS=2`` its map at N = 1000 came
out with other bytes (OpenBLAS splits its products differently across threads).

Named with a leading underscore: a method's key has letters and digits only
(:func:`drfidelity.core.method.method_key`), so no method's name can ever resolve to this
module, and ``core``'s list of reserved keys (a dep of every stage) needs no new entry.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager


@contextmanager
def one_thread():
    """BLAS and OpenMP pools (threadpoolctl) and numba's parallel loops, when numba is loaded,
    limited to one thread for the ``with`` block; restored after it."""
    from threadpoolctl import threadpool_limits

    numba = sys.modules.get("numba")
    previous = numba.get_num_threads() if numba is not None else None
    if numba is not None:
        numba.set_num_threads(1)
    try:
        with threadpool_limits(limits=1):
            yield
    finally:
        if numba is not None:
            numba.set_num_threads(previous)
