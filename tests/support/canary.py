"""Canaries: checks of third-party behaviour that our code works around (numba resetting torch's
thread count, thread counts changing torch's bits). When such behaviour changes, the workaround
may be obsolete but nothing of ours is wrong, so the test reports a CanaryWarning (shown in the
warnings summary; pyproject.toml lets messages starting "canary: " through ``error``) instead
of failing."""

from __future__ import annotations

import warnings


class CanaryWarning(UserWarning):
    """Third-party behaviour that a workaround relies on has changed; revisit the workaround."""


def canary(observed: bool, message: str) -> None:
    """Warn with ``message`` when the third-party behaviour was not ``observed``."""
    if not observed:
        warnings.warn(f"canary: {message}", CanaryWarning, stacklevel=2)
