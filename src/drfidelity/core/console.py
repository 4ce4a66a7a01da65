"""How the command line speaks to a person: one line per bad input, our log records on stderr.

Shared by ``drfidelity stage`` (:mod:`drfidelity.cli`) and ``drfidelity score``
(:mod:`drfidelity.metrics.cli`); imports nothing numeric.
"""

from __future__ import annotations

import logging
import sys

#: what counts as bad input (a ValueError, an OSError, a MemoryError from a size estimate)
BAD_INPUT = (ValueError, OSError, MemoryError)


def one_line(error: BaseException) -> str:
    """The error's message on one line (server bodies and job lists can span several)."""
    return " | ".join(line.strip() for line in str(error).splitlines() if line.strip())


def user_error(prefix: str, error: Exception, debug: bool) -> int:
    """Print ``prefix: error: message`` and return exit code 2 for bad input; re-raise anything
    else, and everything with ``debug`` (the traceback is then Python's)."""
    if debug or not isinstance(error, BAD_INPUT):
        raise error
    print(f"{prefix}: error: {one_line(error)}", file=sys.stderr)
    return 2


def configure_logging() -> None:
    """Our records (and the toorPIA client's) at INFO on stderr; other libraries' at WARNING."""
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr,
                        format="%(levelname)s %(name)s: %(message)s")
    for name in ("drfidelity", "toorpia"):
        logging.getLogger(name).setLevel(logging.INFO)
