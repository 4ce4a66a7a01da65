"""How the command line speaks to a person: one line per bad input, our log records on stderr.

Shared by ``drfidelity stage`` (:mod:`drfidelity.cli`) and ``drfidelity score``
(:mod:`drfidelity.metrics.cli`); imports nothing numeric.
"""

from __future__ import annotations

import logging
import reprlib
import sys

#: what counts as bad input (a ValueError, an OSError, a MemoryError from a size estimate)
BAD_INPUT = (ValueError, OSError, MemoryError)


_BRIEF = reprlib.Repr()
_BRIEF.maxlevel, _BRIEF.maxlist, _BRIEF.maxdict = 2, 4, 4
_BRIEF.maxstring = _BRIEF.maxother = 60


def brief(value: object) -> str:
    """``repr(value)`` cut to a readable size: a YAML alias chain can make one value a list of
    millions of items, whose full repr would turn a one-line refusal into megabytes."""
    return _BRIEF.repr(value)


def one_line(error: BaseException) -> str:
    """The error's message on one line (server bodies and job lists can span several)."""
    return " | ".join(line.strip() for line in str(error).splitlines() if line.strip())


#: the installation extra (pyproject.toml) that brings each optional top-level module
EXTRAS = {"yaml": "pipeline", "pandas": "pipeline", "dvc": "pipeline",
          "matplotlib": "pipeline", "sklearn": "methods", "umap": "methods",
          "openTSNE": "methods", "pccdr": "methods", "pymde": "methods", "torch": "methods",
          "toorpia": "methods", "distributed": "pipeline", "dask": "pipeline"}


def missing_extra(error: BaseException) -> str | None:
    """For a ModuleNotFoundError of an optional dependency, one line naming the extra to
    install; None for anything else."""
    if not isinstance(error, ModuleNotFoundError):
        return None
    module = (error.name or "").split(".")[0]
    extra = EXTRAS.get(module)
    if extra is None:
        return None
    return (f"the Python package {module!r} is not installed; it comes with the [{extra}] "
            f"extra: pip install 'drfidelity[{extra}]'")


def user_error(prefix: str, error: Exception, debug: bool) -> int:
    """Print ``prefix: error: message`` and return exit code 2 for bad input (and for a missing
    optional dependency, naming its extra); re-raise anything else, and everything with
    ``debug`` (the traceback is then Python's)."""
    hint = missing_extra(error)
    if debug or not (hint or isinstance(error, BAD_INPUT)):
        raise error
    print(f"{prefix}: error: {hint or one_line(error)}", file=sys.stderr)
    return 2


def configure_logging() -> None:
    """Our records (and the toorPIA client's) at INFO on stderr; other libraries' at WARNING."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s")
    for name in ("drfidelity", "toorpia"):
        logging.getLogger(name).setLevel(logging.INFO)
