"""The noise-dims probe's rotated variant (``studies.noise_dims.rotated``): off when
absent, so both frozen params files load unchanged with their configurations as they were;
on, a rotated twin of each ``dims`` input for every method but toorPIA, whose skip is noted."""

from __future__ import annotations

import pytest
import yaml

from drfidelity.core.params import ParamsError, parse_params
from drfidelity.studies import noise_dims, study

from pipeline_helpers import REPO

FROZEN = [REPO / "params.yaml", REPO / "releases" / "v1.4.0" / "params.yaml"]
SPEC = study("noise_dims")


def with_rotated(raw: dict, value) -> dict:
    section = {**raw["studies"]["noise_dims"], "rotated": value}
    return {**raw, "studies": {**raw["studies"], "noise_dims": section}}


def plan(configs) -> list[tuple]:
    return [(c.key, c.ids, c.context, c.jobs) for c in configs]


@pytest.mark.parametrize("path", FROZEN, ids=["params", "v1.4.0"])
def test_frozen_params_leave_it_out_and_mean_off(path):
    raw = yaml.safe_load(path.read_text())
    assert "rotated" not in raw["studies"]["noise_dims"]
    params = parse_params(raw)
    assert SPEC.settings(params)["rotated"] is False and SPEC.study_notes(params) == []
    off = SPEC.configs(params)
    assert plan(off) == plan(SPEC.configs(parse_params(with_rotated(raw, False))))
    assert not any(c.key.endswith(noise_dims.ROTATED_KEY) for c in off)


@pytest.mark.parametrize("path", FROZEN, ids=["params", "v1.4.0"])
def test_rotated_adds_a_twin_of_each_dims_input_for_the_generic_methods(path):
    raw = yaml.safe_load(path.read_text())
    params = parse_params(raw)
    off = SPEC.configs(params)
    on = SPEC.configs(parse_params(with_rotated(raw, True)))
    assert plan(on[:len(off)]) == plan(off)  # the axis-aligned inputs as they were
    twins = on[len(off):]
    dims = raw["studies"]["noise_dims"]["dims"]
    assert [c.key for c in twins] == [f"dim{d}_rot" for d in dims]
    keys, tags = [c.key for c in on], [c.context for c in on]
    assert len(set(keys)) == len(keys) and len(set(tags)) == len(tags)
    generic = [m for m in params.methods if m != "toorPIA"]
    for twin in twins:
        axis = next(c for c in off if c.key == twin.key.removesuffix("_rot"))
        assert twin.ids == axis.ids and twin.context == ("noise_dims", f"{axis.context[1]}_rot")
        assert {j.method for j in twin.jobs} == set(generic)  # no toorPIA job
        assert sorted((j.method + "-rotated", j.seed, j.settings) for j in axis.jobs
                      if j.method != "toorPIA") == sorted((j.name, j.seed, j.settings)
                                                          for j in twin.jobs)
        assert all(j.config == twin.key for j in twin.jobs)
    assert SPEC.study_notes(parse_params(with_rotated(raw, True))) == [
        "method toorPIA skipped on the rotated inputs: its maps are imported from its closed "
        "service, which mapped the axis-aligned inputs only"]


def test_rotated_inputs_are_the_axis_aligned_ones_turned():
    """The twin's build asks the generator for the same input with rotation_seed = data_seed."""
    from drfidelity.datasets import inputs

    raw = yaml.safe_load(FROZEN[0].read_text())
    raw = {**raw, "data": {**raw["data"], "n": 90}}
    on = {c.key: c for c in SPEC.configs(parse_params(with_rotated(raw, True)))}
    axis, twin = on["dim10"].build(inputs), on["dim10_rot"].build(inputs)
    assert axis["X"].shape == twin["X"].shape == (90, 10)
    assert (axis["X_truth"] == twin["X_truth"]).all() and (axis["labels"] == twin["labels"]).all()
    gram = axis["X"] @ axis["X"].T - twin["X"] @ twin["X"].T  # rotation: inner products kept
    assert abs(gram).max() < 1e-12 * abs(axis["X"] @ axis["X"].T).max()
    assert abs(axis["X"] - twin["X"]).max() > 0.5


def test_toorpia_alone_gets_no_rotated_input():
    raw = yaml.safe_load(FROZEN[0].read_text())
    params = parse_params({**with_rotated(raw, True), "methods": ["toorPIA"]})
    assert not [c for c in SPEC.configs(params) if c.key.endswith("_rot")]
    assert len(SPEC.study_notes(params)) == 1


@pytest.mark.parametrize("value", ["yes", 1, None, [True]])
def test_a_rotated_that_is_not_a_bool_is_refused_in_one_line(value):
    raw = yaml.safe_load(FROZEN[0].read_text())
    with pytest.raises(ParamsError) as refused:
        SPEC.configs(parse_params(with_rotated(raw, value)))
    message = str(refused.value)
    assert message.startswith("studies.noise_dims.rotated must be true or false, got ")
    assert "\n" not in message


def test_a_missing_key_without_default_is_still_named():
    raw = yaml.safe_load(FROZEN[0].read_text())
    section = {k: v for k, v in raw["studies"]["noise_dims"].items() if k != "data_seed"}
    with pytest.raises(ParamsError, match=r"studies.noise_dims.data_seed is missing"):
        SPEC.configs(parse_params({**raw, "studies": {**raw["studies"],
                                                          "noise_dims": section}}))
