"""A self-contained copy of REPORT.html: every local ``<img>`` inlined as a base64 data URI.

Usage: ``python -m drfidelity.report.standalone REPORT.html OUT.html`` (image paths are read
relative to the input file). Exit status 2 with one line when an image is missing.
"""

from __future__ import annotations

import base64
import html
import re
import sys
from pathlib import Path

_IMG = re.compile(r'<img src="([^"]+)"')


def inline_images(page: str, base: Path) -> str:
    """``page`` with each relative ``<img src>`` replaced by the file's bytes as a data URI."""
    def replace(match: re.Match) -> str:
        src = html.unescape(match.group(1))
        if src.startswith("data:"):
            return match.group(0)
        data = base64.b64encode((base / src).read_bytes()).decode("ascii")
        return f'<img src="data:image/png;base64,{data}"'

    return _IMG.sub(replace, page)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 2:
        print("usage: python -m drfidelity.report.standalone REPORT.html OUT.html",
              file=sys.stderr)
        return 2
    source, target = Path(args[0]), Path(args[1])
    try:
        page = inline_images(source.read_text(encoding="utf-8"), source.parent)
    except FileNotFoundError as exc:
        print(f"standalone: error: {exc.filename} not found", file=sys.stderr)
        return 2
    target.write_text(page, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
