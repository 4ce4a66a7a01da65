"""The report as a list of blocks, rendered to Markdown (REPORT.md) and HTML (REPORT.html).

One model, two renderers, so the two files cannot say different things. Inline text uses a
small Markdown subset (``**bold**``, ``*italic*``, ```code```, ``[text](url)``) that both
renderers understand, in prose and in table cells alike (a GFM table cell is inline Markdown).
A link to a REPORT.md (another root's report) leads to its REPORT.html in the HTML.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Sequence, Union

from drfidelity.core.layout import report_paths
from drfidelity.report.markdown import markdown_table
from drfidelity.report.tables import RankingTable


@dataclass(frozen=True)
class Heading:
    level: int
    text: str


@dataclass(frozen=True)
class Para:
    text: str


@dataclass(frozen=True)
class Quote:
    """A blurb or note (a block quote in Markdown, a shaded box in HTML)."""

    text: str


@dataclass(frozen=True)
class Bullets:
    items: tuple[str, ...]


@dataclass(frozen=True)
class Code:
    lines: tuple[str, ...]


@dataclass(frozen=True)
class Figure:
    """A PNG under the repository root (``src`` relative to REPORT.md) with its caption."""

    src: str
    caption: str


@dataclass(frozen=True)
class Table:
    table: RankingTable


Block = Union[Heading, Para, Quote, Bullets, Code, Figure, Table]


def slug(text: str) -> str:
    """GitHub-style anchor of a heading (lower case, spaces to dashes, punctuation dropped)."""
    return re.sub(r"[^\w\- ]", "", text.lower()).strip().replace(" ", "-")


# ---------------------------------------------------------------- Markdown

def to_markdown(blocks: Sequence[Block]) -> str:
    out: list[str] = []
    for block in blocks:
        if isinstance(block, Heading):
            out.append("#" * block.level + " " + block.text)
        elif isinstance(block, Para):
            out.append(block.text)
        elif isinstance(block, Quote):
            out.append("> " + block.text.replace("\n", "\n> "))
        elif isinstance(block, Bullets):
            out.append("\n".join(f"- {item}" for item in block.items))
        elif isinstance(block, Code):
            out.append("\n".join(["```sh", *block.lines, "```"]))
        elif isinstance(block, Figure):
            out.append(f"![{_plain(block.caption)}]({block.src})\n\n{block.caption}")
        elif isinstance(block, Table):
            out.append(markdown_table(block.table))
        else:  # pragma: no cover - the Block union is closed
            raise TypeError(f"unknown block {block!r}")
        out.append("")
    return "\n".join(out)


#: abbreviations whose full stop ends no sentence (the captions cite "Lueks et al. 2011")
ABBREVIATIONS = ("et al", "e.g", "i.e", "cf", "vs")
#: a full stop and a space that end a sentence: not one of an abbreviation
SENTENCE_END = re.compile("".join(rf"(?<!\b{re.escape(a)})" for a in ABBREVIATIONS) + r"\. ")


def first_sentence(text: str) -> str:
    """``text`` up to its first sentence end (all of it when there is none)."""
    return SENTENCE_END.split(text, maxsplit=1)[0]


def _plain(text: str) -> str:
    """Caption text without markup, for the image's alt text (first sentence)."""
    text = re.sub(r"[*`]", "", text)
    text = re.sub(r"\[([^\]]+)\]\([^)]+\)", r"\1", text)
    return first_sentence(text).replace("[", "(").replace("]", ")")


# ---------------------------------------------------------------- HTML

_REPORTS = tuple(p.name for p in report_paths(Path()))


def _link(match: re.Match) -> str:
    """A Markdown link as HTML; one to a REPORT.md goes to the REPORT.html beside it."""
    path, anchor, fragment = match[2].partition("#")
    target = PurePosixPath(path)
    if target.name == _REPORTS[0]:
        path = target.with_name(_REPORTS[1]).as_posix()
    return f'<a href="{path}{anchor}{fragment}">{match[1]}</a>'


_INLINE = [
    (re.compile(r"`([^`]+)`"), r"<code>\1</code>"),
    (re.compile(r"\*\*(.+?)\*\*"), r"<strong>\1</strong>"),
    (re.compile(r"(?<![\w*])\*(?!\s)(.+?)(?<!\s)\*(?![\w*])"), r"<em>\1</em>"),
    (re.compile(r"\[([^\]]+)\]\(([^)\s]+)\)"), _link),
]

CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;max-width:1100px;margin:2em auto;
padding:0 1em;line-height:1.45;color:#222}
h1,h2,h3{line-height:1.2}
table{border-collapse:collapse;margin:1em 0;font-size:0.85em}
th,td{border:1px solid #ccc;padding:0.25em 0.5em;text-align:center}
td:first-child,th:first-child{text-align:left}
th{background:#f3f3f3}
td.best{background:#d8f0d8;font-weight:bold}
td.worst{background:#fbe3e3;font-style:italic}
td.crit{background:#b3261e;color:#fff}
td.reference{color:#666}
blockquote{background:#f6f8fa;border-left:4px solid #bbb;margin:1em 0;padding:0.5em 1em}
figure{margin:1.5em 0}
figure img{max-width:100%;height:auto;border:1px solid #eee}
figcaption{font-size:0.9em;color:#333}
code{background:#f3f3f3;padding:0 0.2em}
pre{background:#f3f3f3;padding:0.7em;overflow-x:auto}
@media print{
body{max-width:none;margin:0;padding:0;font-size:10pt}
*{-webkit-print-color-adjust:exact;print-color-adjust:exact}
h1,h2,h3{break-after:avoid;page-break-after:avoid}
figure,blockquote,pre,li{break-inside:avoid;page-break-inside:avoid}
figure img{max-height:10.5cm;max-width:100%;width:auto}
figcaption{break-before:avoid;page-break-before:avoid}
tr,th,td{break-inside:avoid;page-break-inside:avoid}
thead{display:table-header-group}
a{color:inherit;text-decoration:none}
}
"""


def inline_html(text: str) -> str:
    out = html.escape(text, quote=False)
    for pattern, replacement in _INLINE:
        out = pattern.sub(replacement, out)
    return out


def to_html(blocks: Sequence[Block], *, title: str) -> str:
    """The report as one HTML page; figures are linked by relative path (see
    :mod:`drfidelity.report.standalone` for a copy with the figures inlined)."""
    body: list[str] = []
    for block in blocks:
        if isinstance(block, Heading):
            body.append(f'<h{block.level} id="{slug(block.text)}">{inline_html(block.text)}'
                        f"</h{block.level}>")
        elif isinstance(block, Para):
            body.append(f"<p>{inline_html(block.text)}</p>")
        elif isinstance(block, Quote):
            body.append(f"<blockquote>{inline_html(block.text)}</blockquote>")
        elif isinstance(block, Bullets):
            items = "".join(f"<li>{inline_html(item)}</li>" for item in block.items)
            body.append(f"<ul>{items}</ul>")
        elif isinstance(block, Code):
            body.append("<pre><code>" + html.escape("\n".join(block.lines)) + "</code></pre>")
        elif isinstance(block, Figure):
            alt = html.escape(_plain(block.caption))
            body.append(f'<figure><img src="{html.escape(block.src)}" alt="{alt}">'
                        f"<figcaption>{inline_html(block.caption)}</figcaption></figure>")
        elif isinstance(block, Table):
            body.append(html_table(block.table))
        else:  # pragma: no cover - the Block union is closed
            raise TypeError(f"unknown block {block!r}")
    return ("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
            f"<title>{html.escape(title)}</title>\n<style>{CSS}</style>\n</head>\n<body>\n"
            + "\n".join(body) + "\n</body>\n</html>\n")


def html_table(table: RankingTable) -> str:
    """Two header rows (column groups, then columns); marks become cell classes, spans
    colspans. Every text is inline Markdown, as in REPORT.md's table."""
    groups = "".join(f'<th colspan="{n}">{inline_html(name)}</th>' for name, n in table.groups)
    header = "".join(f"<th>{inline_html(c.header)}</th>" for c in table.columns)
    rows = []
    for method, cells in table.rows:
        tds = []
        columns = iter(table.columns)
        for cell in cells:
            column = next(columns)
            for _ in range(cell.span - 1):
                next(columns)
            classes = [c for c in (cell.mark if cell.text != "—" else None,
                                   "reference" if column.kind == "reference" else None) if c]
            attr = f' class="{" ".join(classes)}"' if classes else ""
            if cell.span > 1:
                attr += f' colspan="{cell.span}"'
            text = ("⚠ " if cell.mark == "crit" else "") + inline_html(cell.text)
            tds.append(f"<td{attr}>{text}</td>")
        rows.append(f"<tr><td>{inline_html(method)}</td>{''.join(tds)}</tr>")
    return (f'<table>\n<thead>\n<tr><th rowspan="2">{inline_html(table.label)}</th>'
            + groups + "</tr>\n<tr>" + header + "</tr>\n</thead>\n<tbody>\n" + "\n".join(rows) + "\n</tbody>\n</table>")
