"""A study and a dataset of one name never share a folder.

``random_walk`` is both a dataset and a study. The studies' inputs, maps and tables sit in
``data/studies/``, ``embeddings/studies/`` and ``results/studies/``, so a pipeline that runs the
random-walk dataset in the main benchmark as well keeps a whole DVC graph (when both wrote
``data/studies/random_walk``, DVC refused every command of the pipeline).
"""

from __future__ import annotations

import yaml

from drfidelity.core.params import parse_params
from drfidelity.registry import NAMES
from pipeline_helpers import REPO, run, workspace


def test_a_dataset_named_like_a_study_runs_beside_it(tmp_path):
    raw = yaml.safe_load((REPO / "params.yaml").read_text())
    datasets = [*raw["datasets"], "random_walk"]
    assert parse_params({**raw, "datasets": datasets}, NAMES).datasets[-1] == "random_walk"
    root = workspace(tmp_path, datasets=datasets)
    graph = run(["dvc", "dag", "--dot"], root).stdout
    for stage in ("generate@random_walk", "study_inputs@random_walk",
                  "embed@random_walk-PCA", "study_embed@random_walk-PCA"):
        assert f'"{stage}"' in graph
