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
#: colour the next release gave it, it had none before).
METHOD_COLORS = {
    "PCA": "#1f77b4", "Isomap": "#17becf", "PyMDE": "#2ca02c", "PCC": "#9467bd",
    "t-SNE": "#ff7f0e", "UMAP": "#d62728", "DREAMS": "#e377c2", "toorPIA": "#000000",
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


def png_bytes(fig) -> bytes:
    """The figure as PNG bytes (fixed dpi, no Software chunk), then closed."""
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=DPI, metadata=PNG_METADATA)
    plt.close(fig)
    return buffer.getvalue()
