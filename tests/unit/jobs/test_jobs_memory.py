"""Memory admission (src/drfidelity/jobs/memory.py): jobs start only while their expected peaks
fit the memory available, or alone, and a job larger than the machine is refused before any
starts."""

from __future__ import annotations

import math
import threading

import numpy as np
import pandas as pd
import pytest

from drfidelity.jobs import memory, runner
from drfidelity.core.job import Job
from drfidelity.jobs.memory import GIB, MIB, MemoryGate, TooLargeForMachine, expected_peak
from pipeline_helpers import REPO


def test_the_expected_peak_follows_the_measured_sizes():
    """At a measured size, the measurement; between two, log-log interpolation (so monotone);
    past the largest, growth as N squared; a method with no measurement, the default."""
    assert expected_peak("PyMDE", 1000) == 2443 * MIB
    assert expected_peak("PyMDE", 4000) == 23654 * MIB
    assert 2443 * MIB < expected_peak("PyMDE", 1500) < expected_peak("PyMDE", 1600) < 11646 * MIB
    assert expected_peak("PyMDE", 8000) == 4 * 23654 * MIB
    assert expected_peak("PyMDE", 300) == 2443 * MIB  # small inputs: the smallest measured
    assert expected_peak("UMAP", 20000) == memory.OTHER_MIB * MIB


def test_the_measured_peaks_are_the_scale_study_s():
    """The table is the committed scale study's peaks (rounded up to a MiB), not a guess; the
    walk's PyMDE peak, beyond the study's sizes, is the one entry from elsewhere."""
    runs = pd.read_csv(REPO / "results" / "scale_runs.csv")
    measured = {(row.subject, row.n): math.ceil(row.peak_rss_mib)
                for row in runs.itertuples() if row.status == "ok"}
    for method, anchors in memory.PEAK_MIB.items():
        for n, mib in anchors:
            if (method, n) != ("PyMDE", 4000):
                assert measured[(method, n)] == mib, (method, n)
    others = [peak for (subject, n), peak in measured.items()
              if subject in {"PCA", "t-SNE", "UMAP", "DREAMS"}]
    assert max(others) <= memory.OTHER_MIB


def test_meminfo_is_read():
    total, available = memory.meminfo("MemTotal"), memory.meminfo("MemAvailable")
    assert total is None or 0 < available <= total < 2**50


def admit_in_thread(gate: MemoryGate, need: int) -> tuple[threading.Event, threading.Thread]:
    """A thread asking ``gate`` for ``need`` bytes; its event is set once it is admitted."""
    started = threading.Event()

    def ask() -> None:
        with gate.admitted(need):
            started.set()

    thread = threading.Thread(target=ask)
    thread.start()
    return started, thread


def test_a_job_waits_until_its_peak_fits_beside_the_running_ones():
    gate = MemoryGate(10 * GIB, 24 * GIB)
    with gate.admitted(6 * GIB):
        started, waiting = admit_in_thread(gate, 6 * GIB)
        assert not started.wait(0.5), "6 + 6 GiB of a 10 GiB budget ran side by side"
        with gate.admitted(3 * GIB):  # 6 + 3 fits: admitted at once
            assert gate.reserved == 9 * GIB
    assert started.wait(10)
    waiting.join()
    assert gate.reserved == 0


def test_a_job_larger_than_the_budget_runs_alone():
    """What was available at the start is not all the machine has: such a job waits for the
    others, then runs with nothing beside it."""
    gate = MemoryGate(10 * GIB, 24 * GIB)
    gate.refuse_any_too_large({"walk": 12 * GIB})
    with gate.admitted(12 * GIB):
        started, waiting = admit_in_thread(gate, 1 * GIB)
        assert not started.wait(0.5)
    assert started.wait(10)
    waiting.join()


def test_no_budget_admits_everything():
    gate = MemoryGate(None, None)
    with gate.admitted(10**15), gate.admitted(10**15):
        assert gate.reserved == 2 * 10**15
    gate.refuse_any_too_large({"x": 10**15})


def test_a_job_too_large_for_the_machine_is_refused_before_any_starts(tmp_path, monkeypatch):
    """The walk's PyMDE on a machine of 8 GiB: one line naming the job, its size and both
    amounts; no job process is started."""
    np.save(tmp_path / "X.npy", np.zeros((4000, 3)))
    monkeypatch.setattr(runner, "meminfo", lambda field: 8 * GIB)
    monkeypatch.setattr(runner, "in_fresh_process",
                        lambda *a, **k: pytest.fail("a job was started"))
    jobs = [Job.of("PCA", 0), Job.of("PyMDE", 0)]
    with pytest.raises(TooLargeForMachine) as refused:
        runner.run_all("walk", jobs, {"": runner.Input({"X": str(tmp_path / "X.npy")})}, 2,
                       tmp_path)
    message = str(refused.value)
    assert "\n" not in message
    assert message.startswith("PyMDE seed 0 (N = 4000) is expected to need 23.1 GiB")
    assert "more than the 8.0 GiB of memory this machine has: nothing was started" in message
