"""The block model's two renderers and the self-contained HTML copy."""

from __future__ import annotations

import base64

import pytest

from drfidelity.report import standalone
from drfidelity.report.document import (CSS, Figure, Heading, Para, Table, html_table,
                                        inline_html, slug, to_html, to_markdown)
from drfidelity.report.markdown import MARKDOWN_MARKS
from drfidelity.report.tables import Cell, Column, RankingTable


def small_table() -> RankingTable:
    columns = [Column("total", "Σ", "ranking", "total"),
               Column("shepard_near__vs_ambient", "near", "ρ", "higher"),
               Column("recall_k15", "recall@15", "reference", "reference")]
    table = RankingTable("density", columns)
    table.rows = [("PCA", [Cell("8", "best"), Cell("-0.031", "crit"), Cell("0.100", "worst")]),
                  ("UMAP", [Cell("0", "worst"), Cell("0.500", "best"), Cell("—", None)])]
    return table


def test_inline_markup_is_converted_and_text_escaped():
    assert inline_html("**b** and *i*, `c<d>` [t](x.md#a)") == (
        '<strong>b</strong> and <em>i</em>, <code>c&lt;d&gt;</code> <a href="x.md#a">t</a>')
    assert inline_html("5 × 3 * 2 and a*b") == "5 × 3 * 2 and a*b"


def test_html_table_marks_cells_by_class():
    page = html_table(small_table())
    assert '<th colspan="1">ranking</th>' in page
    assert '<td class="best">8</td>' in page and '<td class="worst">0</td>' in page
    assert '<td class="crit">⚠ -0.031</td>' in page
    assert '<td class="worst reference">0.100</td>' in page
    assert '<td class="reference">—</td>' in page


def test_markdown_and_html_say_the_same_things():
    blocks = [Heading(2, "Non-uniform density"), Para("See **this**."),
              Figure("figures/a.png", "**Gallery.** Read it."), Table(small_table())]
    md = to_markdown(blocks)
    assert "## Non-uniform density" in md and "![Gallery](figures/a.png)" in md
    assert "| PCA | **8** | ⚠ -0.031 | *0.100* |" in md
    page = to_html(blocks, title="t")
    assert f'<h2 id="{slug("Non-uniform density")}">' in page
    assert '<img src="figures/a.png" alt="Gallery">' in page
    assert slug("Non-uniform density") == "non-uniform-density"


def test_standalone_inlines_images_and_reports_a_missing_one(tmp_path, capsys):
    (tmp_path / "figures").mkdir()
    (tmp_path / "figures" / "a.png").write_bytes(b"\x89PNG-bytes")
    page = tmp_path / "REPORT.html"
    page.write_text('<img src="figures/a.png" alt="x"><img src="data:image/png;base64,AA" alt="y">')
    assert standalone.main([str(page), str(tmp_path / "out.html")]) == 0
    out = (tmp_path / "out.html").read_text()
    assert base64.b64encode(b"\x89PNG-bytes").decode() in out and "figures/a.png" not in out
    assert 'src="data:image/png;base64,AA"' in out
    page.write_text('<img src="figures/missing.png" alt="x">')
    assert standalone.main([str(page), str(tmp_path / "out2.html")]) == 2
    assert capsys.readouterr().err.count("\n") == 1


@pytest.mark.parametrize("args", [[], ["only-one"]])
def test_standalone_usage_error(args):
    assert standalone.main(args) == 2


def test_print_css_keeps_figures_with_captions_and_rows_whole():
    from drfidelity.report.document import CSS

    media = CSS[CSS.index("@media print"):]
    for rule in ("figure,blockquote,pre,li{break-inside:avoid", "figcaption{break-before:avoid",
                 "tr,th,td{break-inside:avoid", "h1,h2,h3{break-after:avoid"):
        assert rule in media


def test_the_best_mark_and_the_failure_mark_differ():
    """Issue 38: bold marked both the best value and a ⚠ failure in REPORT.md."""
    best, crit = MARKDOWN_MARKS["best"].format("x"), MARKDOWN_MARKS["crit"].format("x")
    assert best != crit and "**" not in crit and "⚠" in crit
    rules = dict(rule.rstrip("}").split("{", 1) for rule in CSS.split("\n")
                 if rule.startswith("td."))
    assert "bold" in rules["td.best"] and "bold" not in rules["td.crit"]


def test_alt_text_keeps_et_al_in_its_first_sentence():
    """Issue 38: the alt text stopped at "Lueks et al."."""
    caption = ("**Rank-error quality** (Lueks et al. 2011), e.g. at κ_t = 0 vs. 1: the share. "
               "Read: the lower, the better.")
    page = to_html([Figure("f.png", caption)], title="t")
    assert 'alt="Rank-error quality (Lueks et al. 2011), e.g. at κ_t = 0 vs. 1: the share"' in page
    assert "![Rank-error quality (Lueks et al. 2011), e.g. at κ_t = 0 vs. 1: the share](f.png)" \
        in to_markdown([Figure("f.png", caption)])
