"""params.yaml validation: every bad value is refused with a message naming the key."""

from __future__ import annotations

import copy
import math

import pytest
import yaml

from drfidelity.core import params as core_params
from drfidelity.core.params import ParamsError
from drfidelity.registry import NAMES
from pipeline_helpers import REPO


def parse_params(raw):
    """As the stages that list names check params (see test_a_map_stage_checks_its_own_method)."""
    return core_params.parse_params(raw, NAMES)


def load_params(path):
    return core_params.load_params(path, NAMES)

COMMITTED = yaml.safe_load((REPO / "params.yaml").read_text())


def test_committed_params_are_valid():
    params = load_params(REPO / "params.yaml")
    assert params.tag == "n1000_d768_snr1"
    assert params.datasets == ("density", "clusters", "transition", "outliers", "populations")


DELETE = object()


def with_change(path: str, value):
    raw = copy.deepcopy(COMMITTED)
    *parents, last = path.split(".")
    node = raw
    for key in parents:
        node = node[key]
    if value is DELETE:
        del node[last]
    else:
        node[last] = value
    return raw


@pytest.mark.parametrize("path, value, message", [
    ("datasets", ["density", "spirals"], "datasets: unknown name.*spirals.*known: density"),
    ("methods", ["PCA", "tSNE"], "methods: unknown name.*tSNE"),
    ("methods", [], "methods must be a non-empty list"),
    ("methods", ["PCA", "PCA"], "lists a name twice"),
    ("data.snr", -1.0, r"data.snr must be > 0 \(inf means no noise\)"),
    ("data.snr", 0, r"data.snr must be > 0 \(inf means no noise\)"),
    ("data.snr", "loud", "data.snr must be a positive number or 'inf'"),
    ("data.snr", "1e-3", "YAML reads 1e-3 as a string"),
    ("data.n", 2.5, "data.n must be an integer"),
    ("data.n", True, "data.n must be an integer"),
    ("data.d", 0, "data.d must be >= 1"),
    ("data.seed", DELETE, "data.seed is missing"),
    ("seeds", 0, "seeds must be >= 1"),
    ("bootstrap.alpha", 1.5, r"bootstrap.alpha must lie in \(0, 1\)"),
    ("method_params.Isomap", {"n_neighbours": 10},
     r"unknown key method_params.Isomap.n_neighbours \(did you mean 'n_neighbors'\?\)"),
    ("method_params.Spectral", {}, "method_params.Spectral: unknown name"),
    ("method_params.tSNE", {}, r"method_params.tSNE: unknown name \(did you mean 't-SNE'\?\)"),
    ("dataset_params.density", [1, 2], "dataset_params.density must be a mapping"),
    ("data.snrr", 4, r"unknown key data.snrr \(did you mean 'snr'\?\); known in data: d, n, "
                     "seed, snr"),
    ("seed", 5, r"unknown key seed \(did you mean 'seeds'\?\)"),
    ("bootstrap.nboot", 10, r"unknown key bootstrap.nboot \(did you mean 'n_boot'\?\)"),
    ("method_params.UMAP", {"n_neighbors": -3}, "method_params.UMAP.n_neighbors must be >= 2, "
                                                "got -3"),
    ("method_params.t-SNE", {"perplexity": "30"}, "method_params.t-SNE.perplexity must be a real"),
    ("method_params.toorPIA", {"deadline_s": 0}, r"method_params.toorPIA.deadline_s must be > 0"),
    ("method_params.toorPIA", {"mode": "api"}, "method_params.toorPIA.mode must be one of"),
    ("method_params.toorPIA", {"retries": 3}, "unknown key method_params.toorPIA.retries"),
    ("ranking", {"population": []}, r"unknown key ranking.population \(did you mean "
                                     "'populations'"),
    ("ranking", {"populations": "minority_shepard__vs_ambient"},
     "ranking.populations must be a list of column names"),
])
def test_bad_values_name_the_key(path, value, message):
    with pytest.raises(ParamsError, match=message):
        parse_params(with_change(path, value))


def test_a_datasets_knobs_are_checked_where_it_is_generated(tmp_path):
    """Validating params loads no generator, so an unknown knob stops the dataset's own
    generate stage (and any study generating it), before anything is written."""
    from drfidelity.pipeline import run_stage

    params = parse_params(with_change("dataset_params.clusters", {"n_cluster": 3}))
    with pytest.raises(ValueError, match=r"unknown key dataset_params.clusters.n_cluster "
                                         r"\(did you mean 'n_clusters'\?\)"):
        run_stage(params, "generate", "clusters", root=tmp_path)
    assert not any(tmp_path.iterdir())


def test_inf_snr_is_accepted():
    assert math.isinf(parse_params(with_change("data.snr", float("inf"))).snr)
    assert parse_params(with_change("data.snr", "inf")).tag.endswith("_snrinf")


def test_unreadable_files(tmp_path):
    with pytest.raises(ParamsError, match="not found"):
        load_params(tmp_path / "params.yaml")
    bad = tmp_path / "params.yaml"
    bad.write_text("data: [unclosed\n")
    with pytest.raises(ParamsError, match="not valid YAML"):
        load_params(bad)
    bad.write_text("- just a list\n")
    with pytest.raises(ParamsError, match="must hold a mapping"):
        load_params(bad)


def test_hyper_parameters_of_listed_methods_are_checked_with_their_defaults():
    raw = with_change("method_params", {})
    params = parse_params(raw)
    assert params.method_params == {}
    raw = with_change("methods", ["PCA"])
    raw["method_params"]["UMAP"] = {"n_neighbors": 1}  # configured but not run: still checked
    with pytest.raises(ParamsError, match="method_params.UMAP.n_neighbors must be >= 2"):
        parse_params(raw)


def test_toorpia_budget_settings_are_params():
    raw = with_change("method_params.toorPIA", {"deadline_s": 30.0, "max_attempts": 2,
                                                "backoff_s": 1.0, "wait_budget_s": 90.0})
    assert parse_params(raw).method_params["toorPIA"]["wait_budget_s"] == 90.0


def test_a_ranking_column_is_checked_against_what_its_dataset_can_rank():
    """params `ranking` names columns of a dataset's spec (``rankable``); the ranking refuses
    any other with the close match, before a table is drawn."""
    from drfidelity.report.ranking import scored_keys

    params = parse_params(with_change("ranking", {"populations": ["minority_shepard"]}))
    with pytest.raises(ParamsError, match=r"ranking.populations: 'minority_shepard' is not a "
                                          r"column populations can rank \(did you mean "
                                          "'minority_shepard__vs_ambient'"):
        scored_keys("populations", params.ranking)
    assert list(scored_keys("outliers", {})) == ["full_shepard", "shepard_near__vs_ambient",
                                                 "outlier_shepard__vs_ambient"]


def test_every_dataset_can_rank_full_and_near_rho_against_the_truth():
    """The truth columns are rankable on every dataset, after its own scored columns; a
    near miss is named with them among the columns it can rank."""
    from drfidelity.datasets.registry import DATASETS
    from drfidelity.report.ranking import scored_keys

    truth = ["shepard_p100__vs_truth", "shepard_near__vs_truth"]
    for dataset in DATASETS:
        keys = scored_keys(dataset, {dataset: truth})
        assert list(keys)[-2:] == truth
        assert [keys[k] for k in truth] == ["full/truth pts", "near/truth pts"]
    with pytest.raises(ParamsError, match=r"'shepard_near__truth' is not a column density can "
                                          r"rank \(did you mean 'shepard_near__vs_truth'"):
        scored_keys("density", {"density": ["shepard_near__truth"]})


def test_each_release_configuration_is_valid():
    """The root's params.yaml is v1.3.0's configuration; releases/<tag>/params.yaml a later
    release's, which differs from it only where that release changed the benchmark."""
    v130 = load_params(REPO / "params.yaml")
    v140 = load_params(REPO / "releases" / "v1.4.0" / "params.yaml")
    assert v130.ranking == {} and v140.ranking == {"populations": ("minority_shepard__vs_ambient",)}
    assert v140.studies["random_walk"]["n_series"] == 8
    same = ("n", "d", "data_seed", "snr", "datasets", "dataset_params", "methods",
            "method_params", "seeds", "bootstrap")
    assert all(getattr(v130, key) == getattr(v140, key) for key in same)


def test_a_key_given_twice_is_refused_naming_both_lines(tmp_path):
    path = tmp_path / "params.yaml"
    text = (REPO / "params.yaml").read_text()
    path.write_text(text + "data:\n  n: 20\n")
    first = 1 + text.splitlines().index("data:")
    last = 1 + len(text.splitlines())
    with pytest.raises(ParamsError, match=f"params.yaml: the key 'data' is given twice in one "
                                          f"mapping \\(lines {first} and {last}\\)"):
        load_params(path)
    nested = text.replace("  n: 1000", "  n: 1000\n  n: 500", 1)
    assert nested != text
    path.write_text(nested)
    with pytest.raises(ParamsError, match="the key 'n' is given twice"):
        load_params(path)


def test_a_yaml_alias_chain_is_refused_in_a_short_line(tmp_path):
    """Nine levels of nine aliases: a list of 387 million items whose repr alone is gigabytes."""
    levels = ["&s1 [" + ", ".join(["1"] * 9) + "]"]
    for level in range(2, 10):
        levels.append(f"&s{level} [" + ", ".join([levels[-1]] + [f"*s{level - 1}"] * 8) + "]")
    text = "\n".join(line for line in (REPO / "params.yaml").read_text().splitlines()
                     if not line.startswith("seeds:"))
    path = tmp_path / "params.yaml"
    path.write_text(f"{text}\nseeds: {levels[-1]}\n")
    with pytest.raises(ParamsError) as refused:
        load_params(path)
    assert str(refused.value).startswith("seeds must be an integer, got [[")
    assert len(str(refused.value)) < 300


def test_data_too_large_for_memory_is_refused_naming_n_and_d(monkeypatch):
    from drfidelity.core import validation

    monkeypatch.setattr(validation, "available_memory", lambda: 16 * 2**30)
    with pytest.raises(ParamsError, match=r"data.n = 1,000 and data.d = 1,000,000,000: a "
                                          r"dataset .* takes 14,901.2 GiB, but 16.0 GiB"):
        parse_params(with_change("data.d", 10**9))
    parse_params(with_change("data.d", 10**6))  # 14.9 GiB: fits


def test_a_map_stage_checks_its_own_method():
    """Without the registry (a map stage, which reads no list of names so that adding one
    leaves it up to date) names are checked as names only, and no method's settings: the stage
    checks its own method's (drfidelity.pipeline.embed)."""
    params = core_params.parse_params(with_change("method_params.UMAP", {"n_neighbors": -3}))
    assert params.names is None and params.method_params["UMAP"] == {"n_neighbors": -3}
    assert core_params.parse_params(with_change("methods", ["PCA", "Spectral"])).methods[-1] \
        == "Spectral"
    with pytest.raises(ParamsError, match="methods must be a non-empty list of names"):
        core_params.parse_params(with_change("methods", [3]))
    with pytest.raises(ParamsError, match="method_params.UMAP must be a mapping"):
        core_params.parse_params(with_change("method_params.UMAP", [1]))
