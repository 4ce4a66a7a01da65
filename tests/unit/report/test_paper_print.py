"""The paper prints every figure's text at a legible size (issue 38: galleries at 4-5 pt)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from PIL import Image

from drfidelity.figures import style

PAPER = Path(__file__).resolve().parents[3] / "paper"
TEX = (PAPER / "main.tex").read_text()
#: the smallest print size the figures' text may have
LEGIBLE_PT = 7.0
#: letter paper, the article class's default
PAPER_WIDTH_IN = 8.5


def text_width_in() -> float:
    """\\textwidth from the geometry options of main.tex."""
    margin = float(re.search(r"\\usepackage\[margin=([\d.]+)in\]\{geometry\}", TEX)[1])
    return PAPER_WIDTH_IN - 2 * margin


def included() -> list[tuple[str, float | None]]:
    """(file, width as a share of \\textwidth, or None at the size drawn) of every figure."""
    found = [(name, None) for name in re.findall(r"\\(?:graphic|figureof)\{([\w.]+\.png)\}", TEX)]
    found += [(name, float(share or 1)) for share, name in re.findall(
        r"\\includegraphics\[width=([\d.]*)\\(?:text|line)width\]\{([\w.]+\.png)\}", TEX)]
    return found


def smallest_font_pt() -> float:
    return min(value for key, value in style.RC.items()
               if key.endswith("size") and isinstance(value, (int, float)))


@pytest.mark.parametrize("name,share", included())
def test_every_figure_prints_its_text_at_7_pt_or_more(name, share):
    with Image.open(PAPER / "figures" / name) as image:
        dpi, width = image.info["dpi"][0], image.width
    assert dpi == pytest.approx(style.DPI, rel=1e-4)  # its natural size is its drawn size
    drawn = width / dpi
    printed = drawn if share is None else share * text_width_in()
    assert printed <= text_width_in() + 1e-3, name
    assert smallest_font_pt() * printed / drawn >= LEGIBLE_PT, name


def test_every_paper_figure_is_included():
    assert {name for name, _ in included()} == {p.name for p in (PAPER / "figures").glob("*.png")}
