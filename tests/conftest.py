"""Test session setup: exact numerics before numpy loads, and the shared reference folder."""

from __future__ import annotations

import os
from pathlib import Path

from drfidelity import runtime

runtime.configure("exact")

import pytest  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("DRFIDELITY_SHARED", REPO.parent / "shared"))
REFERENCE = SHARED / "reference-v1.3.0"


@pytest.fixture(scope="session")
def reference_dir() -> Path:
    """``../shared/reference-v1.3.0``; tests that need it skip, saying why, when it is absent."""
    if not REFERENCE.is_dir():
        pytest.skip(f"reference data not found at {REFERENCE} (set DRFIDELITY_SHARED)")
    return REFERENCE
