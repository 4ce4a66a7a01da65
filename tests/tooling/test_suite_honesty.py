"""The test suite itself: tests that need ../shared are marked and cannot pass by skipping in CI."""

from __future__ import annotations

import os
import subprocess
import sys

from pipeline_helpers import REPO

SHARED_TEST = ("tests/unit/datasets/test_datasets_reference.py"
               "::test_addplot_inputs_reproduce_reference")


def _outcome(tmp_path, **env) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", SHARED_TEST],
        cwd=REPO, capture_output=True, text=True, timeout=300,
        env={**{k: v for k, v in os.environ.items() if k != "CI"},
             "DRFIDELITY_SHARED": str(tmp_path / "absent"), **env})
    return done.returncode, done.stdout.strip().splitlines()[-1]


def test_missing_shared_folder_skips_locally_and_fails_under_ci(tmp_path):
    code, summary = _outcome(tmp_path)
    assert code == 0 and "1 skipped" in summary
    code, summary = _outcome(tmp_path, CI="true")
    assert code == 1 and "1 error" in summary  # pytest.fail in the fixture: an error, not a pass


def test_tests_that_read_the_shared_folder_carry_the_marker():
    done = subprocess.run([sys.executable, "-m", "pytest", "-q", "--collect-only", "-m", "shared",
                           "-p", "no:cacheprovider",
                           "tests/unit/datasets/test_datasets_reference.py",
                           "tests/unit/core/test_params.py"],
                          cwd=REPO, capture_output=True, text=True, timeout=300)
    collected = [line for line in done.stdout.splitlines() if "::" in line]
    assert collected and all(line.startswith("tests/unit/datasets/test_datasets_reference.py")
                             for line in collected)
