"""LaTeX paper tables (booktabs) rendered from the ranking-table model, and the paper's macros.

Unlike the previous release, every method row is kept (its generator silently dropped the
8th).
"""

from __future__ import annotations

import re

from drfidelity.datasets.registry import DATASETS
from drfidelity.core.params import snr_label
from drfidelity.report.tables import RankingTable, fixed
from drfidelity.report.ranking import rankable_columns

#: ranking-table header -> its LaTeX form; a dataset's own scored columns bring theirs.
HEADERS = {
    "full pts": "full", "near pts": "near", "Σ": r"$\Sigma$",
    "full · global": r"full $\rho$ (global)", "near · first-mode band": r"near $\rho$ (first-mode)",
    "tight-cluster scale ×": r"scale $\times$", "recall@15": "recall@15", "trust@15": "trust@15",
    "continuity@15": "cont.@15",
}
_CI = re.compile(r" \[(.+), (.+)\]$")


def latex_cell(text: str, mark: str | None) -> str:
    """Bold best, italic worst, a dagger for failures (bold dropped); CIs in script size."""
    if text == "—":
        return "---"
    body = _CI.sub(r" {\\scriptsize[\1, \2]}", text)
    if mark == "best":
        return rf"\textbf{{{body}}}"
    if mark == "worst":
        return rf"\textit{{{body}}}"
    if mark == "crit":
        return rf"{body}\,\textsuperscript{{\dag}}"
    return body


def latex_table(table: RankingTable, *, title: str, caption_note: str) -> str:
    """A ranking table: its headers mapped by :data:`HEADERS` and the columns its rule scores,
    caption "{title}: ..."."""
    own = {text: latex for c in (*DATASETS[table.dataset].scored,
                                 *rankable_columns(table.dataset).values())
           for text, latex in ((c.points, c.latex_points), (c.header, c.latex_header))}
    headers = {**HEADERS, **own}
    return latex_tabular(table, caption=f"{title}: distance-fidelity ranking. {caption_note}",
                         headers=[headers[c.header] for c in table.columns])


def latex_tabular(table: RankingTable, *, caption: str, headers: list[str] | None) -> str:
    """``table`` as a booktabs ``table`` float labelled ``tab:{table.dataset}``; a spanning
    cell becomes a left-aligned italic ``\\multicolumn`` (e.g. "not operable: ...").
    ``headers`` in LaTeX, or None for the columns' own headers (:func:`tex_text`)."""
    spec = "l" + "c" * len(table.columns)
    if headers is None:
        headers = [tex_text(c.header) for c in table.columns]
    header = " & ".join([escape(table.label)] + headers) + r" \\"
    body = []
    for method, cells in table.rows:
        texts = [rf"\multicolumn{{{c.span}}}{{l}}{{\textit{{{escape(c.text)}}}}}" if c.span > 1
                 else latex_cell(c.text, c.mark) for c in cells]
        body.append(" & ".join([escape(method)] + texts) + r" \\")
    lines = [
        r"\begin{table}[tbp]",
        r"\centering",
        rf"\caption{{{caption}}}",
        rf"\label{{tab:{table.dataset}}}",
        r"\resizebox{\textwidth}{!}{%",
        rf"\begin{{tabular}}{{{spec}}}",
        r"\toprule",
        header,
        r"\midrule",
        *body,
        r"\bottomrule",
        r"\end{tabular}}",
        r"\end{table}",
        "",
    ]
    return "\n".join(lines)


#: LaTeX for the symbols the sentence tables' texts use (the paper's input encoding lacks them)
_TEX_SYMBOLS = {"ρ": r"$\rho$", "Σ": r"$\Sigma$", "→": r"$\to$", "Δ": r"$\Delta$",
               "≤": r"$\le$", "·": r"$\cdot$", "÷": r"$\div$", "×": r"$\times$"}


def tex_text(text: str) -> str:
    """A sentence cell's text in LaTeX: escaped, its symbols in math, `code` (a params key)
    in typewriter."""
    out = escape(text)
    for symbol, tex in _TEX_SYMBOLS.items():
        out = out.replace(symbol, tex)
    return re.sub(r"`([^`]*)`", r"\\texttt{\1}", out)


def wrapped_table(table: RankingTable, *, caption: str, widths: tuple[float, ...]) -> str:
    """``table`` as a booktabs float labelled ``tab:{table.dataset}`` whose columns after the
    first are ragged paragraphs of ``widths`` cm (its texts are sentences, too long for one
    line; needs the ``array`` package)."""
    spec = ("@{}l" + "".join(f">{{\\raggedright\\arraybackslash}}p{{{w}cm}}" for w in widths)
            + "@{}")
    body = [" & ".join([escape(label)] + [latex_cell(tex_text(c.text), c.mark) for c in cells])
            + r" \\" for label, cells in table.rows]
    return "\n".join([
        r"\begin{table}[tbp]", r"\centering", r"\footnotesize", r"\setlength{\tabcolsep}{3pt}",
        rf"\caption{{{caption}}}", rf"\label{{tab:{table.dataset}}}",
        rf"\begin{{tabular}}{{{spec}}}", r"\toprule",
        " & ".join([escape(table.label)] + [tex_text(c.header) for c in table.columns]) + r" \\",
        r"\midrule", *body, r"\bottomrule", r"\end{tabular}", r"\end{table}", ""])


_SPECIAL = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#",
            "_": r"\_", "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\^{}"}


def escape(text: str) -> str:
    """Plain text -> LaTeX text (the ten special characters escaped)."""
    return "".join(_SPECIAL.get(ch, ch) for ch in str(text))


def macro(name: str, value) -> str:
    """One ``\\newcommand`` line (``name`` letters only)."""
    return rf"\newcommand{{\{name}}}{{{value}}}"


def macro_name(*words: str) -> str:
    """Letters-only CamelCase macro name: ("t-SNE", "perplexity") -> "TSNEPerplexity",
    ("populations", "minority_frac") -> "PopulationsMinorityFrac"."""
    parts = re.split(r"[^A-Za-z]+", " ".join(words))
    return "".join(w if w.isupper() else w[:1].upper() + w[1:] for w in parts if w)


def number(value) -> str:
    """A number for LaTeX text: integers with thin-space thousands, others with ``:g``."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}".replace(",", r"\,")
    return f"{value:g}"


def series(values) -> str:
    """"1.5, 2, 3" from a list of numbers."""
    return ", ".join(number(v) for v in values)


def setup_macros(params, constants: dict[str, object]) -> list[str]:
    """The setup the paper's methods section quotes: every generator knob
    (``\\ClustersDynamicRange``), every method setting (``\\TSNEPerplexity``), the
    studies' configurations (``\\RandomWalkLag``, ``\\SweepOutlierFactorValues``) and
    the code ``constants`` given (name -> value)."""
    lines = [macro("NPairs", number(params.n * (params.n - 1) // 2)),
             macro("DataSeed", params.data_seed),
             macro("CIlevel", f"{100 * (1 - params.bootstrap.alpha):g}")]
    for dataset, knobs in params.dataset_params.items():
        lines += [macro(macro_name(dataset, k), number(v)) for k, v in knobs.items()
                  if isinstance(v, (int, float))]
    for method, settings in params.method_params.items():
        lines += [macro(macro_name(method, k), number(v)) for k, v in settings.items()
                  if isinstance(v, (int, float)) and method != "toorPIA"]
    for study, settings in params.studies.items():
        for key, value in settings.items():
            if isinstance(value, bool):  # a switch (noise_dims.rotated), not a quoted number
                continue
            if isinstance(value, (int, float)):
                lines.append(macro(macro_name(study, key), number(value)))
            elif isinstance(value, list) and value and isinstance(value[0], (int, float)):
                lines.append(macro(macro_name(study, key), series(value)))
    return lines + [macro(name, value) for name, value in constants.items()]


def latex_macros(found: dict, params, skipped_text: str, recall_k: int,
                 extra: list[str] = ()) -> str:
    """``paper/macros.tex``: every number the paper's prose quotes, one macro each.

    Names are letters only (LaTeX macro names): ``\\DensityNearLeader``, ``\\SigmaTopCount``...
    """
    lines = ["% Generated by `drfidelity stage report` from results/ and params.yaml; "
             "do not edit.",
             macro("NPoints", params.n), macro("DimAmbient", params.d),
             macro("SNRvalue", snr_label(params.snr)), macro("NSeeds", params.seeds),
             macro("NBoot", params.bootstrap.n_boot), macro("NMethods", found["n_methods"]),
             macro("NDatasets", found["n_datasets"]),
             macro("SigmaTopMethod", escape(found["sigma_top"][0] or "---")),
             macro("SigmaTopCount", found["sigma_top"][1]),
             macro("NearTopMethod", escape(found["near_top"][0] or "---")),
             macro("NearTopCount", found["near_top"][1]),
             macro("FullNotNearCount", found["full_not_near"]),
             macro("FullTruthHolds", found["truth_holds"]["full"]),
             macro("NearTruthHolds", found["truth_holds"]["near"])]
    crush, crush_ds, crush_m = found["worst_crush"]
    lines += [macro("WorstCrushMethod", escape(crush_m or "---")),
              macro("WorstCrushDataset", escape(crush_ds or "---")),
              macro("WorstCrushValue", f"{crush:.1f}" if crush_m else "---"),
              macro("SkippedNote", skipped_text), macro("RecallK", recall_k)]
    for dataset, f in found["datasets"].items():
        name = dataset.capitalize()
        lines += [
            macro(f"{name}SigmaWinner", escape(", ".join(f["sigma_winners"]))),
            macro(f"{name}SigmaMax", f["sigma_max"]),
            macro(f"{name}NearLeader", escape(f["near_leader"][0] or "---")),
            macro(f"{name}NearValue", fixed(f['near_leader'][1])),
            macro(f"{name}FullLeader", escape(f["full_leader"][0] or "---")),
            macro(f"{name}FullValue", fixed(f['full_leader'][1])),
            macro(f"{name}NearPct", f"{f['near_pct']:.1f}"),
            macro(f"{name}Outvote", f"{f['outvote']:.1f}"),
            macro(f"{name}CrushMethod", escape(f["crush"][0] or "---")),
            macro(f"{name}CrushValue", f"{f['crush'][1]:.1f}"),
            macro(f"{name}ScoredColumns", sum(c.kind == "points" for c in f["table"].columns)),
        ]
    return "\n".join(lines + list(extra)) + "\n"
