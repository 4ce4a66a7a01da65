"""One look for every figure: a fixed colour per method, print-size fonts, byte-stable PNGs.

The PNGs are DVC outputs that ``dvc repro`` must rebuild byte for byte, so they are drawn with
the Agg backend at a fixed dpi and saved without the "Software" text chunk (the only
non-deterministic field matplotlib writes into a PNG).
"""

from __future__ import annotations

import io
from pathlib import Path

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)

#: one colour per method in every figure (the previous release's palette; DREAMS gets the
#: colour the next release gave it, it had none before; the living benchmark's three, which no
#: frozen release draws, the two tab10 colours left besides grey, and tab20b's dark blue).
METHOD_COLORS = {
    "PCA": "#1f77b4", "Isomap": "#17becf", "PyMDE": "#2ca02c", "PCC": "#9467bd",
    "t-SNE": "#ff7f0e", "UMAP": "#d62728", "DREAMS": "#e377c2", "toorPIA": "#000000",
    "PaCMAP": "#8c564b", "TriMap": "#bcbd22", "PHATE": "#393b79",
}
DPI = 200
#: width of a full-width figure in inches: the text width of a one-column paper, so that the
#: 8-point fonts below stay 8 points when the figure is printed.
FULL_WIDTH = 7.0
PANELS_PER_ROW = 4
RC = {
    "font.size": 8, "axes.titlesize": 8, "axes.labelsize": 8, "xtick.labelsize": 7,
    "ytick.labelsize": 7, "legend.fontsize": 7, "figure.titlesize": 9,
    "axes.spines.top": False, "axes.spines.right": False, "savefig.dpi": DPI,
    "path.simplify": False, "font.family": "DejaVu Sans",
}
PNG_METADATA = {"Software": None}


def _use_bundled_fonts_only() -> None:
    """Draw text only with the fonts shipped inside matplotlib's wheel, so that a host's own
    fonts (a system copy of DejaVu Sans, say) can never change the PNG bytes."""
    from matplotlib import font_manager

    bundled = Path(matplotlib.get_data_path()) / "fonts" / "ttf"
    manager = font_manager.fontManager
    manager.ttflist = [f for f in manager.ttflist if Path(f.fname).parent == bundled]
    manager._findfont_cached.cache_clear()  # lookups made before the filter


# Applied on import: this module is only imported to draw the benchmark's figures, and artists
# read the style when they are created, so it must be in place before the first one.
_use_bundled_fonts_only()
matplotlib.rcParams.update(RC)


def method_color(method: str) -> str:
    """The method's colour; a name outside the registry gets a neutral grey, never a default
    colour that could coincide with another method's."""
    return METHOD_COLORS.get(method, "#7f7f7f")


def figure(width: float, height: float):
    """A new figure (constrained layout) of ``width`` x ``height`` inches."""
    return plt.figure(figsize=(width, height), layout="constrained")


#: where a label may sit around its point (offset in points, tried in this order): beside it
#: first, then above and below, then farther out; the first place that stays inside the panel
#: and overlaps neither a label already placed nor an obstacle wins, so the layout is
#: deterministic.
LABEL_OFFSETS = tuple((r * dx, r * dy) for r in (4, 10, 18, 28, 40)
                      for dx, dy in ((1, 0.6), (1, -1), (-1, 0.6), (-1, -1), (0, 1.4),
                                     (0, -2)))
#: the thin line that ties a label to its point, visible once the label had to move away
LEADER = {"arrowstyle": "-", "lw": 0.4, "shrinkA": 0}


def place_labels(ax, points, texts, colours, *, marker_size: float = 6.0, others=(),
                 segments=(), **text_kw) -> None:
    """Annotate ``points`` (data coordinates) with ``texts`` so that every label stays inside
    the panel, no two labels overlap and no label covers a marker (``points`` and ``others``,
    ``marker_size`` points wide) or a segment (pairs of data points, e.g. error bars): a simple
    deterministic label repel. A label that fits nowhere takes the place inside the panel with
    the fewest overlaps; a leader line ties each label to its point.

    The figure is drawn once first, so positions are read off the final layout.
    """
    from matplotlib.transforms import Bbox

    fig = ax.figure
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    to_pixels = fig.dpi / 72
    half = marker_size * to_pixels / 2
    panel = ax.get_window_extent(renderer)
    markers = [*points, *others]
    taken = [Bbox.from_extents(x - half, y - half, x + half, y + half)
             for x, y in (ax.transData.transform(markers) if len(markers) else [])]
    for a, b in segments:
        (x0, y0), (x1, y1) = ax.transData.transform([a, b])
        taken.append(Bbox.from_extents(min(x0, x1) - 1, min(y0, y1) - 1, max(x0, x1) + 1,
                                       max(y0, y1) + 1))
    for point, text, colour in zip(points, texts, colours):
        label = ax.annotate(text, point, xytext=LABEL_OFFSETS[0], textcoords="offset points",
                            color=colour, arrowprops={**LEADER, "color": colour,
                                                      "shrinkB": marker_size / 2},
                            **text_kw)

        def cost(offset):
            """(outside the panel, overlaps) of the label at ``offset``: lower is better."""
            _aim(label, offset)
            box = _text_box(label, renderer).padded(to_pixels)
            inside = (panel.x0 <= box.x0 and box.x1 <= panel.x1 and panel.y0 <= box.y0
                      and box.y1 <= panel.y1)
            return not inside, sum(box.overlaps(other) for other in taken)

        _aim(label, min(LABEL_OFFSETS, key=cost))  # min keeps the first of equal costs
        taken.append(_text_box(label, renderer))


def _text_box(label, renderer):
    """The window extent of an annotation's text alone (its own includes the leader line,
    which always touches the label's own marker)."""
    from matplotlib.text import Text

    label.update_positions(renderer)
    return Text.get_window_extent(label, renderer)


def _aim(label, offset) -> None:
    """Move ``label`` to ``offset`` (points), aligned so that it grows away from its point."""
    dx, dy = offset
    label.set_position(offset)
    label.set_horizontalalignment("left" if dx > 0 else "right" if dx < 0 else "center")
    label.set_verticalalignment("bottom" if dy > 0 else "top")


def png_bytes(fig) -> bytes:
    """The figure as PNG bytes (fixed dpi, no Software chunk), then closed."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI, metadata=PNG_METADATA)
    plt.close(fig)
    return buffer.getvalue()
