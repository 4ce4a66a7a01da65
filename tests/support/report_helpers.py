"""A small pipeline run through the figures and report stages, for the report/paper tests.

toorPIA is in the method list without a cached map or key, so it is skipped with a reason:
the report and captions must say so.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from pipeline_helpers import REPO, build_dataset, stage, workspace

DATASETS = ("density", "clusters", "transition", "outliers", "populations")
SMALL = dict(data__n=150, data__d=30, datasets=list(DATASETS),
             methods=["PCA", "Isomap", "toorPIA"], seeds=1, bootstrap__n_boot=100)


def build_report_workspace(tmp: Path) -> Path:
    """generate -> embed -> score -> aggregate -> figures -> report on small data."""
    root = workspace(tmp, **SMALL)
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("TOORPIA_API_KEY", raising=False)
        for dataset in DATASETS:
            build_dataset(root, dataset)
        stage(root, "aggregate")
        for dataset in DATASETS:
            stage(root, "figures", dataset)
        stage(root, "report")
    for name in ("main.tex", "references.bib"):
        shutil.copy(REPO / "paper" / name, root / "paper" / name)
    return root


def require_tool(name: str) -> str:
    """Path of executable ``name``; a missing tool skips locally but fails under CI."""
    path = shutil.which(name)
    if path is None:
        message = (f"{name} not found (Debian: apt-get install -y --no-install-recommends "
                   "chromium poppler-utils latexmk texlive-latex-recommended)")
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path
