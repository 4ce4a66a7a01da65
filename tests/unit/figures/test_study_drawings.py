"""The study figures' layout: what a reader must see is neither covered nor cut."""

from __future__ import annotations

import numpy as np
import pandas as pd

from drfidelity.figures import style
from drfidelity.figures import studies as draw

METHODS = ("PCA", "Isomap", "PyMDE", "PCC", "t-SNE", "UMAP", "DREAMS", "toorPIA")


def texts_inside_figure(fig) -> None:
    """Everything ``fig`` draws (titles, labels, tick labels) lies inside it: none is cut at
    its edge."""
    fig.canvas.draw()
    drawn = fig.get_tightbbox(fig.canvas.get_renderer())
    frame = fig.bbox_inches
    tolerance = 1 / style.DPI  # a pixel
    assert (drawn.x0 >= frame.x0 - tolerance and drawn.y0 >= frame.y0 - tolerance
            and drawn.x1 <= frame.x1 + tolerance and drawn.y1 <= frame.y1 + tolerance), drawn


def test_the_bridge_gap_legend_covers_no_bar():
    """Issue 38: the legend sat on the tallest bar."""
    bridges = ["0-1", "1-2", "2-3"]
    gaps = pd.DataFrame([{"method": m, "bridge": b, "seed": 0,
                          "gap_ratio": 0.9 if (m, b) == ("UMAP", "1-2") else 0.1 + 0.01 * i}
                         for i, m in enumerate(METHODS) for b in bridges])
    fig = draw.bridge_gap_bars(gaps)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legend = fig.legends[0].get_window_extent(renderer)
    bars = [patch.get_window_extent(renderer) for patch in fig.axes[0].patches]
    tallest = max(bars, key=lambda box: box.y1)
    assert not legend.overlaps(tallest)
    assert not any(legend.overlaps(bar) for bar in bars)
    texts_inside_figure(fig)


def test_the_dims_grid_row_names_are_not_cut():
    """Issue 38: "toorPIA-embedding" printed as "orPIA-embedding"."""
    rng = np.random.default_rng(0)
    dims = (6, 40, 80, 200, 250, 300, 400, 768, 1500, 2000)  # the committed grid's
    labels = {d: np.arange(30) % 3 for d in dims}
    maps = {m: {d: rng.normal(size=(30, 2)) for d in dims}
            for m in ("PCA", "Isomap", "toorPIA", "toorPIA-embedding")}
    fig = draw.dims_grid(labels, maps, {"UMAP": "sklearn has no transform for new points"})
    texts_inside_figure(fig)


def test_a_skipped_panel_keeps_its_reason_inside_it():
    fig = style.figure(style.FULL_WIDTH, 2.5)
    axes = fig.subplots(1, 4)
    draw.skipped_panel(axes[2], "PyMDE", "pymde optimizes fit coordinates; no transform")
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    panel, text = axes[2].get_window_extent(renderer), axes[2].texts[0]
    box = text.get_window_extent(renderer)
    assert panel.x0 <= box.x0 and box.x1 <= panel.x1
