"""The report's study sections: each study's (its spec's ``section``, handed the report
kit :mod:`drfidelity.report.kit`), and the main benchmark's run-to-run stability, bridge gaps
and the scale study.

Each section is built from its result tables (``results/<name>.csv``) and the numbers the
study figures quote (``figures/studies/facts.json``). A study whose table is
absent renders as a one-line "not built" note, so the report runs before its stage exists.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pandas as pd

from drfidelity.core.params import Params
from drfidelity.metrics.bridges import TORN_RATIO
from drfidelity.report import kit
from drfidelity.report.document import Block, Heading, Para, Table
from drfidelity.report.scale import CAPTION as SCALE_CAPTION
from drfidelity.report.scale import scale_macros, scale_section
from drfidelity.report.tables import Cell, Column, RankingTable, fixed
from drfidelity.studies import all_studies

#: the main benchmark's tables the study sections read (``results/<name>.csv``, each
#: optional), written by the aggregate stage
MAIN_TABLES = ("stability", "bridge_gaps")
MAIN_PRODUCER = "the aggregate stage"
#: the title of the studies' part of the report: the previous release's, kept so that a reader
#: can set the two reports side by side
STUDIES_HEADING = "Supplements"
STABILITY_COLUMNS = (("n_runs", "runs"), ("position_dispersion", "position dispersion"),
                     ("full_shepard__std", "full ρ std"),
                     ("full_stress_fidelity__std", "full fidelity std"))
#: the places of the main benchmark's sections among the studies' (``report_order``)
STABILITY_ORDER, BRIDGES_ORDER = 20, 90


def tables() -> tuple[str, ...]:
    """Every result table the study sections read: the studies', then the main ones."""
    return tuple(name for spec in all_studies() for name in spec.report_tables) + MAIN_TABLES


@dataclass
class StudyResults:
    """The study tables that exist (by name, see :func:`tables`), the study
    figures' facts (``None``: figures not built), the run's params (``None``: not known;
    a section then says what it cannot quote in general words) and whether the root builds
    the scale study (the checkout's root does; a release's pipeline leaves the stage out, so
    its report leaves the section out rather than call it not built)."""

    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    facts: dict | None = None
    params: Params | None = None
    scale: bool = True

    def figure(self, key: str, caption: str) -> list[Block]:
        """The figure ``key`` with its caption, or nothing when it was not drawn."""
        files = (self.facts or {}).get("files", {})
        return [kit.Figure(files[key], caption)] if key in files else []

    def fact(self, key: str) -> dict:
        return (self.facts or {}).get(key, {})

    def drawn_caption(self, key: str) -> str:
        """The caption the figures stage wrote beside figure ``key`` (it knows what it drew)."""
        return self.fact(key).get("caption", "")


# ------------------------------------------------------------------------- tables

def stability_tables(stability: pd.DataFrame) -> dict[str, RankingTable]:
    """Per dataset: run-to-run spread of the stochastic methods (4 decimals, by method)."""
    tables = {}
    columns = [Column(k, h, "Run-to-run spread", "plain") for k, h in STABILITY_COLUMNS]
    for dataset in dict.fromkeys(stability["dataset"]):
        rows = stability[stability["dataset"] == dataset].sort_values("method")
        tables[dataset] = kit.filled(f"stability_{dataset}", columns, {
            r["method"]: [Cell(str(int(r[k])) if k == "n_runs" else fixed(r[k], 4))
                          for k, _ in STABILITY_COLUMNS] for _, r in rows.iterrows()})
    return tables


def bridge_table(gaps: pd.DataFrame) -> RankingTable:
    """Median gap ratio over seeds per bridge, and how many bridges are torn (median above
    :data:`TORN_RATIO`), methods in canonical order."""
    bridges = list(dict.fromkeys(gaps["bridge"]))
    medians = gaps.groupby(["method", "bridge"])["gap_ratio"].median()
    columns = ([Column(b, b, "Median gap ÷ centroid distance per bridge", "plain")
                for b in bridges] + [Column("torn", "torn", "Bridges torn", "plain")])
    rows = {}
    for method in kit.ordered(gaps["method"]):
        values = [float(medians[(method, b)]) for b in bridges]
        rows[method] = ([Cell(fixed(v), "crit" if v > TORN_RATIO else None) for v in values]
                        + [Cell(str(sum(v > TORN_RATIO for v in values)))])
    return kit.filled("bridge_gaps", columns, rows)


# ------------------------------------------------------------------------- sections

def stability_section(s: StudyResults) -> list[Block]:
    title = "Run-to-run stability"
    if "stability" not in s.tables:
        return kit.not_built(title, MAIN_PRODUCER, "stability", folder="results")
    stability = s.tables["stability"]
    blocks: list[Block] = [Heading(2, title), Para(
        "For each stochastic method, its seeds' maps are aligned onto the lowest seed's by "
        "Procrustes (centred, unit Frobenius norm, best rotation or reflection); position "
        "dispersion is the mean over points of the spread of their aligned positions. The "
        "std columns are the spread of the scores over seeds.")]
    blocks += s.figure("stability", (
        "**Stability** per dataset: position dispersion (left) and the std of full ρ over "
        "seeds (right), one bar per stochastic method. Read: a tall bar means the seeds draw "
        "different maps, so a single map of that method should not be over-read."))
    for dataset, table in stability_tables(stability).items():
        top = stability[stability["dataset"] == dataset].sort_values(
            "position_dispersion").iloc[-1]
        blocks += [Heading(3, f"Stability — {dataset}"), Table(table),
                   Para(f"Least stable layout: {top['method']} (dispersion "
                        f"{fixed(top['position_dispersion'], 4)}).")]
    return blocks


def bridge_gaps(s: StudyResults) -> pd.DataFrame | None:
    """The bridge gaps, or None where none were measured: the table is missing, or the run
    has no transition dataset (its rows are that dataset's alone)."""
    gaps = s.tables.get("bridge_gaps")
    return None if gaps is None or gaps.empty else gaps


def bridges_section(s: StudyResults) -> list[Block]:
    title = "Bridge gaps (transition)"
    gaps = bridge_gaps(s)
    if gaps is None and "bridge_gaps" in s.tables:
        return [Heading(2, title), Para("Not measured: the bridges are the transition "
                                         "dataset's, which this run leaves out.")]
    if gaps is None:
        return kit.not_built(title, MAIN_PRODUCER, "bridge_gaps", folder="results")
    table = bridge_table(gaps)
    torn = {m: int(cells[-1].text) for m, cells in table.rows}
    blocks: list[Block] = [Heading(2, title), Para(
        "For each bridge between neighbouring states on the transition loop: the smallest "
        "radius at which the two states connect through the bridge's points in the map "
        "(single linkage), divided by the distance of the two states' centroids. "
        f"Above {fixed(TORN_RATIO)} (⚠) the bridge is torn: the map draws a gap the data does "
        "not have.")]
    blocks += s.figure("bridge_gaps", (
        "**Bridge gaps**: median gap ratio per bridge and method, dashed = torn threshold. "
        "Read: bars above the line are bridges the map cuts."))
    blocks += [Table(table), Para(
        "Torn bridges: " + ", ".join(f"{m} {k}" for m, k in torn.items()) + ".")]
    return blocks


def study_blocks(s: StudyResults) -> list[Block]:
    """Every study section, in report order (the studies' ``report_order``, the main
    benchmark's stability and bridge gaps among them), then the scale study where the root
    builds it. A study the params leave out has no section (the living configuration runs
    some only); one they configure but that was not built says so."""
    sections = [(spec.report_order, lambda s, section=spec.section: section(s, kit.KIT))
                for spec in all_studies() if s.params is None or spec.name in s.params.studies]
    sections += [(STABILITY_ORDER, stability_section), (BRIDGES_ORDER, bridges_section)]
    blocks = []
    for _, section in sorted(sections, key=lambda entry: entry[0]):
        blocks += section(s)
    if not s.scale:
        return blocks
    return blocks + scale_section(s.tables.get("scale_runs"), s.tables.get("scale_exponents"),
                                  s.fact("scale").get("machine"),
                                  s.figure("scale", SCALE_CAPTION))


def study_macros(s: StudyResults) -> list[str]:
    """``\\newcommand`` lines for the numbers the paper's study prose quotes ("---" for
    a study not built, so the paper typesets either way)."""
    lines = [line for spec in all_studies() if spec.macros for line in spec.macros(s, kit.KIT)]
    if (gaps := bridge_gaps(s)) is not None:
        torn = {m: cells[-1].text for m, cells in bridge_table(gaps).rows}
        text = ", ".join(f"{kit.escape(m)} {k}" for m, k in torn.items() if k != "0")
        lines.append(kit.macro("BridgesTorn", text or "none"))
    else:
        lines.append(kit.macro("BridgesTorn", "---"))
    return lines + scale_macros(s.tables.get("scale_runs"), s.tables.get("scale_exponents"))


def study_paper_tables(s: StudyResults, params: Params) -> dict[str, str]:
    """The studies' paper tables (``paper/tables/<name>``) whose results exist, and the main
    benchmark's stability and bridge-gap tables for the paper's appendix."""
    tables = {name: tex for spec in all_studies() if spec.paper_tables
              for name, tex in spec.paper_tables(s, kit.KIT, params).items()}
    if "stability" in s.tables:
        tables["stability.tex"] = stability_latex(s.tables["stability"])
    if (gaps := bridge_gaps(s)) is not None:
        tables["bridge_gaps.tex"] = kit.latex_tabular(
            bridge_table(gaps), headers=None,
            caption=(r"Bridge gaps on the transition loop: per bridge, the median over seeds "
                     "of the smallest single-linkage radius joining its two states through "
                     "its points in the map, over the distance of the states' centroids; "
                     f"marked above {fixed(TORN_RATIO)} (torn). From "
                     r"\texttt{results/bridge\_gaps.csv}."))
    return tables


def stability_latex(stability: pd.DataFrame) -> str:
    """Every dataset's stability table as one paper table, a row per dataset and method."""
    columns = [Column(k, h, "Run-to-run spread", "plain") for k, h in STABILITY_COLUMNS]
    rows = {f"{dataset}: {method}": cells for dataset, table in stability_tables(stability).items()
            for method, cells in table.rows}
    return kit.latex_tabular(
        kit.filled("stability", columns, rows), headers=None,
        caption=("Run-to-run stability of the stochastic methods: their seeds' maps aligned "
                 "onto the lowest seed's by Procrustes analysis, the position dispersion "
                 r"(mean spread of a point's aligned positions) and the standard deviation "
                 r"over seeds of full $\rho$ and of the full-pair stress fidelity. From "
                 r"\texttt{results/stability.csv}."))


def study_paper_figures() -> tuple[str, ...]:
    """The study figures the paper shows: the studies', then the scale study's."""
    return tuple(key for spec in all_studies() for key in spec.paper_figures) + ("scale",)


def study_glossary(params: Params) -> tuple[str, ...]:
    """The glossary bullets of the studies' own labels, in report order."""
    specs = sorted(all_studies(), key=lambda spec: spec.report_order)
    return tuple(line for spec in specs if spec.glossary for line in spec.glossary(params))
