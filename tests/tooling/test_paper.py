"""The paper as a reader gets it: every figure and table cited, every reference with a year,
and the committed sources typesetting without a single LaTeX or BibTeX warning.

The warning check is ``tools/paper_check.py`` (``make paper`` runs it after latexmk); the build
test needs latexmk (a Debian package: skipped locally without it, a failure under CI).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys

import pytest

from pipeline_helpers import REPO
from report_helpers import require_tool

PAPER = REPO / "paper"
CHECK = REPO / "tools" / "paper_check.py"


def check(tmp_path, log: str, blg: str) -> subprocess.CompletedProcess:
    (tmp_path / "main.log").write_text(log)
    (tmp_path / "main.blg").write_text(blg)
    return subprocess.run([sys.executable, str(CHECK), str(tmp_path / "main.log"),
                           str(tmp_path / "main.blg")], capture_output=True, text=True)


def sources() -> str:
    """main.tex and the generated tables it inputs."""
    return "\n".join(p.read_text() for p in [PAPER / "main.tex",
                                             *sorted((PAPER / "tables").glob("*.tex"))])


def test_paper_check_names_every_kind_of_warning(tmp_path):
    log = ("(./main.tex\n"
           "Overfull \\hbox (8.9pt too wide) in paragraph at lines 25--33\n"
           "[]\\OT1/cmr/m/n/9 dimensionality-\n\n"
           "Underfull \\hbox (badness 10000) in paragraph at lines 40--41\n\n"
           "LaTeX Warning: Reference `sec:x' on page 2 undefined on input line 3.\n\n"
           "Package natbib Warning: Citation `y' on page 1 undefined on input line 50.\n\n"
           "LaTeX Warning: Float too large for page by 12.0pt on input line 99.\n")
    blg = ("Database file #1: references.bib\nWarning--empty year in pccdr\n"
           "(There were 1 warnings)\n")
    result = check(tmp_path, log, blg)
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert len(lines) == 6
    assert "dimensionality-" in lines[0] and "Underfull" in lines[1]
    assert "sec:x" in lines[2] and "Citation `y'" in lines[3] and "Float too large" in lines[4]
    assert lines[5].endswith("Warning--empty year in pccdr")


def test_paper_check_passes_a_clean_build_and_says_when_the_build_is_missing(tmp_path):
    clean = check(tmp_path, "(./main.tex [1] [2] )\nOutput written on main.pdf (2 pages).\n",
                  "Database file #1: references.bib\n")
    assert clean.returncode == 0 and "0 warning(s)" in clean.stdout
    missing = subprocess.run([sys.executable, str(CHECK), str(tmp_path / "no.log"),
                              str(tmp_path / "main.blg")], capture_output=True, text=True)
    assert missing.returncode == 2 and "run `make paper` first" in missing.stderr


def test_every_figure_and_table_is_cited_and_every_figure_file_used():
    tex = sources()
    # \label{fig:x}, and the label arguments of \figureof: every {fig:x} not after \ref
    labels = set(re.findall(r"(?<!\\ref)\{((?:fig|tab):[\w-]+)\}", tex))
    cited = set(re.findall(r"\\ref\{([^}]+)\}", tex))
    assert len(labels) >= 20
    assert sorted(labels - cited) == []
    used = set(re.findall(r"\{([\w-]+\.png)\}", tex))
    files = {p.name for p in (PAPER / "figures").glob("*.png")}
    assert sorted(files - used) == [] and sorted(used - files) == []


def test_every_reference_has_a_year_and_is_cited():
    bib = (PAPER / "references.bib").read_text()
    entries = re.split(r"\n(?=@)", bib.strip())
    keys = [re.match(r"@\w+\{([^,]+),", e).group(1) for e in entries]
    assert len(keys) >= 20 and len(set(keys)) == len(keys)
    assert [k for k, e in zip(keys, entries) if not re.search(r"\byear\s*=\s*\{\d{4}\}", e)] == []
    cited = {k.strip() for group in re.findall(r"\\cite[tp]?\{([^}]+)\}", sources())
             for k in group.split(",")}
    assert sorted(set(keys) - cited) == [] and sorted(cited - set(keys)) == []


@pytest.mark.slow
@pytest.mark.skipif(bool(os.environ.get("CI")), reason="CI runs the same build: `make paper`")
def test_committed_paper_builds_without_any_warning(tmp_path):
    latexmk = require_tool("latexmk")
    paper = tmp_path / "paper"
    shutil.copytree(PAPER, paper, ignore=shutil.ignore_patterns(
        "*.aux", "*.bbl", "*.blg", "*.fdb_latexmk", "*.fls", "*.log", "*.out", "*.pdf"))
    build = subprocess.run([latexmk, "-pdf", "-interaction=nonstopmode", "-halt-on-error",
                            "main.tex"], cwd=paper, capture_output=True, text=True)
    assert build.returncode == 0, (paper / "main.log").read_text(errors="replace")[-3000:]
    result = subprocess.run([sys.executable, str(CHECK), str(paper / "main.log"),
                             str(paper / "main.blg")], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout
    # no bitmap (Type 3) font: TS1 symbols without cm-super come out as Metafont bitmaps
    fonts = subprocess.run([require_tool("pdffonts"), str(paper / "main.pdf")],
                           capture_output=True, text=True, check=True).stdout
    assert "Type 3" not in fonts, fonts
