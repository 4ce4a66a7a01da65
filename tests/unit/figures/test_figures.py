"""Figures: engine-derived numbers, one colour per method, PNG bytes stable across processes."""

from __future__ import annotations

import hashlib
import json
import pickle
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from drfidelity.registry import METHODS
from drfidelity.metrics import Reference
from drfidelity.figures import style
from drfidelity.figures.analysis import DatasetView, analyse, facts as caption_facts
from drfidelity.figures.dataset import (distance_distribution, draw_all, level_outline,
                                        level_steps)
from drfidelity.figures.settings import figure_names

# Draws every figure of a pickled view and prints the sha256 of each; run in a fresh
# interpreter to compare its bytes with this process's.
DRAW = r"""
import hashlib, json, pickle, sys
from drfidelity.figures.dataset import draw_all
pngs, _ = draw_all(pickle.load(sys.stdin.buffer))
print(json.dumps({k: hashlib.sha256(v).hexdigest() for k, v in pngs.items()}))
"""


def small_view(dataset: str = "clusters", n: int = 120) -> DatasetView:
    from drfidelity.datasets import generate

    arrays = generate(dataset, n=n, d=20, data_seed=0, snr=1.0)
    X = arrays["X"]
    centred = X - X.mean(axis=0)
    pca = centred @ np.linalg.svd(centred, full_matrices=False)[2][:2].T
    rng = np.random.default_rng(1)
    maps = {"PCA": pca, "UMAP": pca + rng.normal(scale=pca.std() / 3, size=pca.shape),
            "DREAMS": rng.normal(size=(n, 2))}
    reference = Reference(X, labels=arrays["labels"])
    per_run, aggregated = [], []
    for method, Y in maps.items():
        row = reference.score(Y)
        per_run.append({"dataset": dataset, "method": method, "seed": 0, **row})
        aggregated += [{"dataset": dataset, "method": method, "metric": k, "median": v,
                        "ci_lo": v, "ci_hi": v, "n_runs": 1} for k, v in row.items()]
    return DatasetView(dataset, dataset, arrays, maps, {m: 0 for m in maps},
                               pd.DataFrame(aggregated), pd.DataFrame(per_run))


def test_png_bytes_are_identical_in_a_fresh_process_and_after_other_work():
    """The view (its maps and scores) is made here; a fresh interpreter draws it, and this
    process, which has run other tests (matplotlib state included), draws it too."""
    view = small_view()
    fresh = json.loads(subprocess.run([sys.executable, "-c", DRAW], input=pickle.dumps(view),
                                      capture_output=True, check=True).stdout)
    here = {k: hashlib.sha256(v).hexdigest() for k, v in draw_all(view)[0].items()}
    assert fresh == here and len(here) == len(figure_names("clusters"))


def test_png_has_no_software_chunk_and_fixed_dpi():
    fig = style.figure(2, 2)
    fig.subplots().plot([0, 1], [0, 1])
    data = style.png_bytes(fig)
    assert b"Software" not in data and b"matplotlib" not in data
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width = int.from_bytes(data[16:20], "big")
    assert width == 2 * style.DPI


def test_every_method_has_its_own_colour():
    colours = [style.method_color(m) for m in METHODS]
    assert len(set(colours)) == len(METHODS)
    assert style.method_color("DREAMS") != style.method_color("not-a-method")


def test_facts_agree_with_the_metric_engine():
    view = small_view()
    analysis = analyse(view)
    facts = caption_facts(view, analysis)
    engine = view.per_run.set_index("method")
    assert facts["near_pct"] == pytest.approx(engine.loc["PCA", "near_band_pct__vs_ambient"],
                                              abs=1e-12)
    assert facts["best_auc_method"] in ("PCA", "UMAP")  # the random map is worst
    assert facts["auc_log_rnx"]["DREAMS"] == pytest.approx(0.0, abs=0.1)


def test_a_map_equal_to_the_data_scores_perfectly():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 2))
    view = DatasetView("density", "t", {"X": X}, {"PCA": X.copy()}, {"PCA": 0},
                               pd.DataFrame(columns=["dataset", "method", "metric", "median",
                                                     "ci_lo", "ci_hi", "n_runs"]),
                               pd.DataFrame(columns=["method", "seed"]))
    analysis = analyse(view)
    assert analysis.auc["PCA"] == pytest.approx(1.0)
    assert np.all(analysis.pointwise["PCA"] == 1.0)
    assert np.all(analysis.rank_quality["PCA"] == 1.0)


def test_recall_bias_kth_distance_counts_from_the_nearest_other_point():
    X = np.arange(6, dtype=float)[:, None] * np.array([[1.0, 0.0]])
    view = DatasetView("density", "t", {"X": X}, {}, {}, pd.DataFrame(),
                               pd.DataFrame())
    analysis = analyse(view)
    assert analysis.k == 5  # capped at N - 1
    assert analysis.kth_distance.tolist() == [5.0, 4.0, 3.0, 3.0, 4.0, 5.0]


def test_only_matplotlibs_own_fonts_are_used():
    from pathlib import Path

    import matplotlib
    from matplotlib import font_manager

    bundled = Path(matplotlib.get_data_path()) / "fonts" / "ttf"
    assert font_manager.fontManager.ttflist
    assert {Path(f.fname).parent for f in font_manager.fontManager.ttflist} == {bundled}
    assert Path(font_manager.findfont("DejaVu Sans")).parent == bundled


def test_the_out_vote_title_quotes_the_ratio_of_the_bars_it_stands_over():
    """Issue 38: the title said 6.0 : 1 over bars of all pairs and near pairs (7.0 : 1)."""
    view = small_view()
    analysis = analyse(view)
    right = distance_distribution(view, analysis).axes[1]
    far, near = (bar.get_height() for bar in right.patches)
    assert far / near == pytest.approx(analysis.outvote_ratio)
    assert f"{far / near:.1f} : 1" in right.get_title()
    assert caption_facts(view, analysis)["outvote_ratio"] == analysis.outvote_ratio
    assert far + near == analysis.d_ambient.size


def test_the_rank_quality_level_is_one_outline_per_panel():
    """Q' grows with the tolerance, so the level's boundary is one row per column: no stubs."""
    quality = np.array([[0.1, 0.2, 0.1], [0.6, 0.4, 0.2], [0.9, 0.7, 0.3]])
    np.testing.assert_array_equal(level_steps(quality, 0.5), [0.5, 1.5, np.nan])
    # a region of one cell, top right: its lower edge and its left side, not a stub
    x, y = level_outline(np.array([1, 2]), np.array([[0.1, 0.1], [0.1, 0.6]]), 0.5)
    np.testing.assert_array_equal(x, [1.5, 2.5, np.nan, 1.5, 1.5, np.nan])
    np.testing.assert_array_equal(y, [0.5, 0.5, np.nan, 1.5, 0.5, np.nan])


def test_labels_stay_inside_their_panel_and_apart():
    """Points on a panel's edges: every label inside the panel, none on top of another."""
    from matplotlib.text import Text

    fig = style.figure(2.0, 2.0)
    ax = fig.subplots()
    points = [(0, 0), (0, 1), (1, 0), (1, 1), (0.02, 0.98), (0.98, 0.02)]
    ax.scatter(*zip(*points))
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    style.place_labels(ax, points, [f"label{i}" for i in range(6)], ["black"] * 6, fontsize=7)
    renderer = fig.canvas.get_renderer()
    panel = ax.get_window_extent(renderer)
    boxes = [Text.get_window_extent(t, renderer) for t in ax.texts]
    assert len(boxes) == 6
    for box in boxes:
        assert panel.x0 <= box.x0 and box.x1 <= panel.x1 and panel.y0 <= box.y0 <= box.y1 <= panel.y1
    assert not any(a.overlaps(b) for i, a in enumerate(boxes) for b in boxes[i + 1:])
