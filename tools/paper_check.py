"""Fail on any LaTeX or BibTeX warning of the paper's last build (`make paper` runs this).

latexmk exits 0 on a PDF with overfull boxes, undefined references or a BibTeX entry without a
year; this reads what the last LaTeX pass wrote to ``main.log`` and what BibTeX wrote to
``main.blg`` and prints one line per warning.

Usage: python3 tools/paper_check.py paper/main.log paper/main.blg
Exit status: 0 when neither file holds a warning, 1 otherwise, 2 when a file is missing.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

#: the start of a warning in the LaTeX log: a box that does not fit, any "... Warning:" of
#: LaTeX, a class or a package (undefined references and citations, float too large, font
#: substitutions, rerun requests), a character the font lacks.
LOG_WARNING = re.compile(r"^(Overfull|Underfull) \\[hv]box|^(LaTeX|Package|Class)\b.*Warning:"
                         r"|^Missing character:")
#: BibTeX's warnings ("Warning--empty year in x") and errors ("I couldn't open ...", "---line").
BLG_WARNING = re.compile(r"^Warning--|^I (couldn't|didn't|found no)|error message")


def log_warnings(text: str) -> list[str]:
    """The warnings of a LaTeX log, each with its continuation lines joined (the log wraps at
    79 characters and a package warning continues on lines starting with its name in
    parentheses)."""
    found: list[str] = []
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if not LOG_WARNING.search(line):
            continue
        message = line
        for follow in lines[i + 1:i + 4]:
            if not follow.strip() or LOG_WARNING.search(follow):
                break
            message += " " + follow.strip()
        found.append(message)
    return found


def blg_warnings(text: str) -> list[str]:
    """The warnings and errors of a BibTeX log."""
    return [line for line in text.splitlines() if BLG_WARNING.search(line)]


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__.strip().splitlines()[-2], file=sys.stderr)
        return 2
    log, blg = (Path(a) for a in argv)
    for path in (log, blg):
        if not path.is_file():
            print(f"paper_check: {path} not found (run `make paper` first)", file=sys.stderr)
            return 2
    found = ([f"{log}: {w}" for w in log_warnings(log.read_text(errors="replace"))]
             + [f"{blg}: {w}" for w in blg_warnings(blg.read_text(errors="replace"))])
    for line in found:
        print(line)
    print(f"paper_check: {len(found)} warning(s) in {log.name} and {blg.name}",
          file=sys.stderr if found else sys.stdout)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
