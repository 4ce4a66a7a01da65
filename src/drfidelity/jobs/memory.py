"""Memory admission: a job starts only when its expected peak fits the memory left.

Each job runs in a process of its own, so a stage's memory is the sum of its running jobs'.
PyMDE's grows fast with N: on the 4000-point walk one job takes nearly all of a 24 GiB machine,
so a second job beside it would have the kernel kill one of them hours into the run. So the
runner reserves each running job's expected peak and starts the next one only while the sum
fits what was available when the run began, or once nothing else runs; before anything runs, it
refuses a job whose peak exceeds the machine's memory. The peaks are measured resident sizes,
which count the libraries' pages a job shares with the process it was forked from, so they
err on the safe side. Where and when a job runs never changes its map, so none of this is a stage
dependency.
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Iterator

MIB = 2**20
GIB = 2**30
#: measured peak resident memory (MiB) of one job process by number of points: the scale study
#: (results/scale_runs.csv, clusters at d = 50), and PyMDE's ru_maxrss on releases/v1.4.0's
#: 8-series walk (N = 4000); a method not listed stays under 1 GiB up to N = 20000 there
PEAK_MIB = {
    "PyMDE": ((1000, 2443), (2000, 11646), (4000, 23654)),
    "PCC": ((1000, 526), (2000, 780)),
    "Isomap": ((1000, 179), (2000, 251), (5000, 758), (10000, 2456), (20000, 9338)),
}
OTHER_MIB = 1024


class TooLargeForMachine(ValueError):
    """A job whose expected peak exceeds the memory available to the whole run."""


def loglog(anchors: tuple[tuple[int, float], ...], n: int) -> float:
    """The value at ``n`` of measurements (size, value), sizes ascending: interpolated log-log
    between them, the smallest size's value below them, and growing as N² past the largest
    (pair-based methods hold and visit all pairs)."""
    if n <= anchors[0][0]:
        return anchors[0][1]
    for (n0, m0), (n1, m1) in zip(anchors, anchors[1:]):
        if n <= n1:
            slope = math.log(m1 / m0) / math.log(n1 / n0)
            return m0 * (n / n0) ** slope
    n_last, m_last = anchors[-1]
    return m_last * (n / n_last) ** 2


def expected_peak(method: str, n: int) -> int:
    """Bytes one job of ``method`` on ``n`` points is expected to hold at its peak: its
    measured peaks at other sizes, :func:`loglog`."""
    anchors = PEAK_MIB.get(method)
    if not anchors:
        return OTHER_MIB * MIB
    return int(loglog(anchors, n) * MIB)


def meminfo(field: str) -> int | None:
    """Bytes of ``field`` in /proc/meminfo (``MemTotal``, ``MemAvailable``: what can be used
    without swapping), or None where there is none: the runner then admits every job."""
    try:
        with open("/proc/meminfo", encoding="ascii") as info:
            for line in info:
                if line.startswith(f"{field}:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        return None
    return None


class MemoryGate:
    """Admits jobs while the sum of their expected peaks fits ``budget`` bytes (what was
    available when the run began), one alone whatever its need, and refuses up front a job
    whose need exceeds ``limit`` (the machine's memory). None: no bound."""

    def __init__(self, budget: int | None, limit: int | None):
        self.budget, self.limit = budget, limit
        self.reserved = 0
        self._changed = threading.Condition()

    def refuse_any_too_large(self, needs: dict[str, int]) -> None:
        """Raise :class:`TooLargeForMachine`, in one line, for the largest of ``needs``
        (description -> bytes) when it exceeds the machine's memory."""
        if self.limit is None or not needs:
            return
        what, need = max(needs.items(), key=lambda item: item[1])
        if need > self.limit:
            raise TooLargeForMachine(
                f"{what} is expected to need {need / GIB:.1f} GiB (its measured peak at this "
                f"size), more than the {self.limit / GIB:.1f} GiB of memory this machine has: "
                "nothing was started; run it on a machine with more memory")

    @contextlib.contextmanager
    def admitted(self, need: int) -> Iterator[None]:
        """Hold ``need`` bytes of the budget while the block runs, waiting until they fit (a
        job runs alone whatever its need once nothing else is running)."""
        with self._changed:
            self._changed.wait_for(lambda: self.budget is None or self.reserved == 0
                                   or self.reserved + need <= self.budget)
            self.reserved += need
        try:
            yield
        finally:
            with self._changed:
                self.reserved -= need
                self._changed.notify_all()
