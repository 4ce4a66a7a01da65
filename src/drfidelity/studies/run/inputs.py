"""A study's inputs -> ``data/{study}/`` (``{config}/`` below it for a study of several).

A stage of their own, apart from the maps (:mod:`.embedding`): on a machine that restores the
maps from the map store, the inputs are regenerated in seconds and the maps stay up to date.
"""

from __future__ import annotations

from pathlib import Path

from drfidelity.core.files import dumps_json, write_array_dir
from drfidelity.core.layout import study_data_dir
from drfidelity.core.params import Params
from drfidelity.datasets import inputs as data_inputs
from drfidelity.studies import study
from drfidelity.studies.spec import input_meta, join


def write_study_inputs(params: Params, name: str, root: Path) -> None:
    """Study ``name``'s inputs -> ``data/{name}/``: each input's arrays and ``meta.json``."""
    configs = study(name).configs(params)
    built = {c.key: c.build(data_inputs) for c in configs}
    data = {join(key, array): value
            for key, arrays in built.items() for array, value in arrays.items()}
    write_array_dir(study_data_dir(root, name), data,
                    {join(key, "meta.json"): dumps_json(input_meta(arrays))
                     for key, arrays in built.items()})
