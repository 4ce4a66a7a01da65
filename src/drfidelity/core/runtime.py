"""Process-wide numeric settings, applied before numpy, torch or numba are imported.

Why this module exists: byte-identical results need one thread per method call (thread count
changes float reduction order) and, for agreement with the v1.3.0 reference arrays to the last
bit, numpy's OpenBLAS on its generic kernels with numpy's AVX-512 loops off. All of these are
read by the libraries once, at import time, so they must be set first: the CLI calls
:func:`configure` before it imports anything numeric, and so does ``tests/conftest.py``.

Two modes:
* ``exact`` (pipeline stages, tests, the Docker image): generic BLAS kernels, no AVX-512 loops,
  torch's baseline kernels. Reproduces the reference inputs and values bit for bit and gives
  the same bytes on any x86-64 host.
* ``fast`` (the ``drfidelity score`` CLI on users' data by default): the machine's own kernels;
  results agree with exact mode to ~1e-14.
"""

from __future__ import annotations

import ctypes
import os
import signal
import socket
import sys
import threading
import time

THREAD_VARIABLES = (
    "OMP_NUM_THREADS",
    "OPENBLAS_NUM_THREADS",
    "MKL_NUM_THREADS",
    "NUMBA_NUM_THREADS",
    "VECLIB_MAXIMUM_THREADS",
)
EXACT_VARIABLES = {
    "OPENBLAS_CORETYPE": "Prescott",
    "NPY_DISABLE_CPU_FEATURES": (
        "AVX512F AVX512CD AVX512_KNL AVX512_KNM AVX512_SKX AVX512_CLX AVX512_CNL AVX512_ICL"
    ),
    # torch picks its vector kernels per CPU too (PyMDE and PCC results changed bits between
    # AVX-512 and the baseline); pin the baseline kernels and MKL's reproducible code path.
    "ATEN_CPU_CAPABILITY": "default",
    "MKL_CBWR": "COMPATIBLE",
    # numba compiles for the host CPU (its name and features) by default, and UMAP's maps of the
    # minority-fraction sweep differ between an AMD EPYC and an Intel Xeon host. One fixed target,
    # name and features both, gives one code on every host with AVX2.
    "NUMBA_CPU_NAME": "haswell",
    "NUMBA_CPU_FEATURES": "",
}
MODES = ("exact", "fast")
PR_SET_PDEATHSIG = 1  # linux/prctl.h


def configure(mode: str = "exact") -> None:
    """Pin threads (and, in exact mode, the CPU kernels) for this process and its children.

    Thread variables are only set when unset, so a user can still choose; the exact-mode
    kernel variables are forced, because any other value breaks bit-exactness silently.
    Raises RuntimeError when numpy is already imported, because then the settings would
    not take effect and results would differ without a word.
    """
    if mode not in MODES:
        raise ValueError(f"numeric mode must be one of {MODES}, got {mode!r}")
    if mode == "exact" and "numpy" in sys.modules and not exact_in_effect():
        raise RuntimeError(
            "drfidelity.core.runtime.configure('exact') must run before numpy is imported "
            "(OPENBLAS_CORETYPE / NPY_DISABLE_CPU_FEATURES are read at import time)"
        )
    for name in THREAD_VARIABLES:
        os.environ.setdefault(name, "1")
    # Idle OpenMP threads must not spin: spinning collapses throughput when jobs run side by side.
    os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    os.environ.setdefault("TQDM_DISABLE", "1")
    # PCC moves itself to CUDA when a device is visible; the benchmark is CPU-only.
    os.environ["CUDA_VISIBLE_DEVICES"] = ""
    if mode == "exact":
        os.environ.update(EXACT_VARIABLES)
    os.environ["DRFIDELITY_NUMERICS"] = mode


def exact_in_effect() -> bool:
    """Whether this process runs with the exact-numerics settings (set before numpy loaded)."""
    return all(os.environ.get(k) == v for k, v in EXACT_VARIABLES.items())


def require_exact(what: str) -> None:
    """RuntimeError naming ``what`` and this host unless exact numerics are in effect: a map
    made without them differs in its last bits from the benchmark's."""
    if not exact_in_effect():
        raise RuntimeError(f"{what}: the process on {socket.gethostname()} does not run exact "
                           "numerics (start cluster workers with `drfidelity worker`)")


def current_mode() -> str:
    """The mode this process runs in ('exact' only if its kernel variables are in effect)."""
    return "exact" if exact_in_effect() else "fast"


def describe() -> dict[str, str]:
    """Versions and numeric settings of this process, for ENVIRONMENT.md and provenance."""
    import platform
    from importlib import metadata

    from drfidelity import __version__

    info = {
        "python": platform.python_version(),
        "platform": f"{platform.system()} {platform.machine()}",
        "numerics": current_mode(),
        "drfidelity": __version__,
    }
    for name in THREAD_VARIABLES + tuple(EXACT_VARIABLES):
        info[name] = os.environ.get(name, "(unset)")
    for dist in ("numpy", "scipy", "scikit-learn", "pandas", "matplotlib", "torch", "umap-learn",
                 "numba", "pynndescent", "openTSNE", "pymde", "pccdr", "toorpia", "dvc"):
        try:
            info[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            info[dist] = "(not installed)"
    return info


def die_with_parent(parent: int) -> None:
    """End this process when process ``parent`` dies, even by SIGKILL (``dvc repro`` killed):
    a stage would otherwise run on unseen, and a pool's idle workers wait on its queue forever.
    Linux: the kernel sends SIGKILL (``prctl(PR_SET_PDEATHSIG)``); elsewhere a daemon thread
    checks once a second."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL) != 0:
            raise OSError(ctypes.get_errno(), "prctl failed")
    except (OSError, AttributeError):
        def watch() -> None:
            while os.getppid() == parent:
                time.sleep(1.0)
            os._exit(1)

        threading.Thread(target=watch, daemon=True).start()
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)
