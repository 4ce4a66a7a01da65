"""Does tuning change who leads (report.tuning): a hand-made study where every verdict is known,
and the paper table and macros the report stage writes from the real results."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pandas as pd

from drfidelity.report.tuning import METRIC, overtaken, tuning, tuning_latex, tuning_macros

ROOT = Path(__file__).resolve().parents[3]
PARAMS = SimpleNamespace(method_params={"t-SNE": {"perplexity": 30}, "UMAP": {"n_neighbors": 15}})


def _main() -> pd.DataFrame:
    """Near ρ at default on density: DREAMS leads (0.5); t-SNE 0.3, UMAP 0.1, PCA 0.2."""
    values = {"PCA": 0.2, "t-SNE": 0.3, "UMAP": 0.1, "DREAMS": 0.5}
    return pd.DataFrame([("density", m, METRIC, v) for m, v in values.items()],
                        columns=["dataset", "method", "metric", "median"])


def _study(tsne_best: float) -> pd.DataFrame:
    """t-SNE's perplexity 30 (its default) and 100, UMAP's n_neighbors 15 and 50, DREAMS's
    reg_lambda 0.15 (default) and 0.5 (0.55); a full-ρ row that must be ignored."""
    rows = [("t-SNE", "perplexity", 30, 0.3), ("t-SNE", "perplexity", 100, tsne_best),
            ("UMAP", "n_neighbors", 15, 0.1), ("UMAP", "n_neighbors", 50, 0.12),
            ("DREAMS", "reg_lambda", 0.15, 0.5), ("DREAMS", "reg_lambda", 0.5, 0.55)]
    table = pd.DataFrame([("density", m, k, v, METRIC, s) for m, k, v, s in rows],
                         columns=["dataset", "method", "knob", "value", "metric", "median"])
    noise = pd.DataFrame([("density", "UMAP", "n_neighbors", 5, "full_shepard", 0.99)],
                         columns=table.columns)
    return pd.concat([table, noise], ignore_index=True)


def test_each_row_has_its_default_its_best_and_the_verdict_against_the_leader():
    found = {t.method: t for t in tuning(_study(0.6), _main(), PARAMS)}
    assert list(found) == ["t-SNE", "UMAP", "DREAMS"]  # canonical order
    tsne = found["t-SNE"]
    assert (tsne.knob, tsne.default, tsne.at_default, tsne.best, tsne.at_best) == (
        "perplexity", 30.0, 0.3, 100.0, 0.6)
    assert tsne.verdict == "beats DREAMS even at DREAMS's best (0.550)"
    assert found["UMAP"].best == 50.0  # the full-ρ row of n_neighbors 5 is not near ρ
    assert found["UMAP"].verdict == "stays below DREAMS's default (0.500)"
    assert found["DREAMS"].default == 0.15  # the registry's default, params.yaml silent
    assert found["DREAMS"].verdict == "default leader; tuned t-SNE leads"
    assert list(overtaken(found.values())) == ["density"]


def test_a_best_between_the_leader_s_default_and_its_best_is_said_so():
    found = {t.method: t for t in tuning(_study(0.52), _main(), PARAMS)}
    assert found["t-SNE"].verdict == "beats DREAMS's default (0.500), not its best (0.550)"
    assert found["DREAMS"].verdict == ("default leader, and still leads when every studied "
                                       "method is tuned")
    assert overtaken(found.values()) == {}
    assert r"\newcommand{\TuningOvertakenCount}{0}" in tuning_macros(found.values())


def test_paper_table_and_macros_name_each_row_and_who_overtakes():
    found = tuning(_study(0.6), _main(), PARAMS)
    tex = tuning_latex(found)
    assert r"\label{tab:tuning}" in tex
    assert (r"density & t-SNE & \texttt{perplexity} & 30 & 0.300 & 100 & 0.600 & beats DREAMS "
            r"even at DREAMS's best (0.550) \\") in tex
    assert tex.count(r" \\" + "\n") == 4  # the header and three rows
    macros = tuning_macros(found)
    assert r"\newcommand{\TuningOvertaken}{density: t-SNE at \texttt{perplexity} 100 ($0.600$)}" \
        in macros


def test_committed_paper_table_has_a_row_per_studied_method_and_dataset():
    study = pd.read_csv(ROOT / "results" / "studies" / "hyperparam_sensitivity_aggregated.csv")
    tex = (ROOT / "paper" / "tables" / "hyperparams.tex").read_text()
    for dataset, method in study[["dataset", "method"]].drop_duplicates().itertuples(index=False):
        assert f"\n{dataset} & {method} & " in tex
    assert r"\input{tables/hyperparams.tex}" in (ROOT / "paper" / "main.tex").read_text()
