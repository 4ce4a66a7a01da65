"""The ``Examples`` of the public metric functions run as written (numpydoc doctests)."""

from __future__ import annotations

import doctest
import importlib

import pytest

MODULES = ("engine", "neighbours", "coranking")


@pytest.mark.parametrize("module", MODULES)
def test_examples_run(module):
    loaded = importlib.import_module(f"drfidelity.metrics.{module}")
    result = doctest.testmod(loaded, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert result.attempted > 0, f"{module} has no examples"
    assert result.failed == 0


def test_every_public_function_has_an_example():
    import drfidelity.metrics as metrics

    missing = [name for name in metrics.__all__ if "Examples" not in getattr(metrics, name).__doc__]
    assert not missing
