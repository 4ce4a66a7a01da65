"""tools/compute_cost.py (`make paper`): the paper's compute-cost table from the recorded
times, checked on hand-made records."""

from __future__ import annotations

import csv

from pipeline_helpers import REPO  # noqa: F401  (puts tools/ on sys.path)
import compute_cost

JOBS = [  # pipeline, stage, method, seconds
    ("dvc.yaml", "embed@density-PyMDE", "PyMDE", 30.0),
    ("dvc.yaml", "embed@clusters-PyMDE", "PyMDE", 10.0),
    ("dvc.yaml", "embed@transition-PyMDE", "PyMDE", 20.0),
    ("dvc.yaml", "study_embed@random_walk-PyMDE", "PyMDE", 600.0),
    ("dvc.yaml", "embed@density-PCA", "PCA", 0.04),
    ("dvc.yaml", "study_embed@noise_dims-UMAP", "UMAP", 90.0),
    ("releases/v1.4.0/dvc.yaml", "embed@density-PCA", "PCA", 5000.0),  # another pipeline
]
STAGES = [("dvc.yaml", "embed@density-PyMDE", 40.0), ("dvc.yaml", "embed@density-PCA", 2.0),
          ("dvc.yaml", "score@density", 18.0), ("releases/v1.4.0/dvc.yaml", "score@density", 99.0)]


def _write(folder, name, header, rows):
    with open(folder / name, "w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)


def test_the_table_sums_the_checkouts_jobs_and_stages(tmp_path):
    _write(tmp_path, "jobs.csv", ["pipeline", "stage", "method", "seed", "config", "n",
                                  "seconds", "cpu"],
           [(p, s, m, 0, "", 1000, t, "Intel Xeon") for p, s, m, t in JOBS])
    _write(tmp_path, "stages.csv", ["pipeline", "stage", "seconds", "cpu"],
           [(*row, "AMD EPYC") for row in STAGES])
    out = tmp_path / "compute_cost.tex"
    assert compute_cost.main(["--times", str(tmp_path), "--out", str(out)]) == 0
    text = out.read_text()
    lines = text.splitlines()
    # PyMDE: three main maps (median 20 s, 1 min in all) and one study map (10 min)
    assert r"PyMDE & 3 & 20.0\,s & 1.0\,min & 1 & 10.0\,min \\" in lines
    assert r"PCA & 1 & 0.04\,s & 0.04\,s & -- & -- \\" in lines  # the release's row left out
    assert r"UMAP & -- & -- & -- & 1 & 1.5\,min \\" in lines
    # stage kinds by wall time, the release's stage left out: 42 s of 60 s are map stages
    assert lines.index(r"\texttt{embed} & \multicolumn{2}{r}{2} & 42.0\,s & & \\") < \
        lines.index(r"\texttt{score} & \multicolumn{2}{r}{1} & 18.0\,s & & \\")
    assert r"\newcommand{\ComputeMapShare}{70\%}" in lines
    # PyMDE 660 s and UMAP 90 s of 750.04 s of map jobs
    assert r"\newcommand{\ComputeHeaviest}{PyMDE and UMAP (100\% of the map jobs' time)}" in lines
    assert "1.0\\,min in all" in text and "AMD EPYC, Intel Xeon (2 cores)" in text
