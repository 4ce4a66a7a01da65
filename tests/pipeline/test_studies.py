"""The studies: every frozen v1.3.0 configuration beside the main benchmark.

The committed tables equal the previous release's published ones cell for cell for the exactly
reproducible methods (PCA, Isomap, t-SNE and toorPIA's maps); on a small profile the stages
run end to end, follow params (a removed method or seed leaves no row behind), reuse the main
benchmark's maps where a job asks for the same map, and do not depend on the pool size.
"""

from __future__ import annotations

import json
import shutil

import numpy as np
import pandas as pd
import pytest
import yaml

from drfidelity.crosscheck.comparison import exempt
from pipeline_helpers import (REPO, copy_run, pipeline_commands, run_commands, set_params,
                              stage, tree_digest)
from test_results import tolerance

EXACT = ("PCA", "Isomap", "t-SNE", "toorPIA", "toorPIA-embedding")
#: results file -> the columns that say which run (or group) a row is
PER_RUN_KEYS = {
    "addplot_per_run.csv": ["method", "seed"],
    "random_walk_per_run.csv": ["method", "seed"],
    "sweep_outliers_per_run.csv": ["outlier_factor", "method", "seed"],
    "sweep_populations_per_run.csv": ["minority_frac", "method", "seed"],
    "dimsweep_per_run.csv": ["dim", "data_seed", "method", "seed"],
    "dimsweep_embedding_per_run.csv": ["dim", "data_seed", "method", "seed"],
    "hyperparam_sensitivity_per_run.csv": ["dataset", "method", "knob", "value", "seed"],
}
AGGREGATED_KEYS = {
    "addplot_aggregated.csv": ["method", "metric"],
    "random_walk_aggregated.csv": ["method", "metric"],
    "sweep_outliers_aggregated.csv": ["method", "outlier_factor", "metric"],
    "sweep_populations_aggregated.csv": ["method", "minority_frac", "metric"],
    "dimsweep_aggregated.csv": ["method", "dim", "metric"],
    "dimsweep_embedding_aggregated.csv": ["method", "dim", "metric"],
    "hyperparam_sensitivity_aggregated.csv": ["dataset", "method", "knob", "value", "metric"],
}
NOT_VALUES = {"stochastic", "n", "d", "supported", "note", "new", "snr", "dataset", "n_runs"}


def read(path) -> pd.DataFrame:
    table = pd.read_csv(path, float_precision="round_trip")
    if "value" in table:  # knob values: 5 and 5.0 are the same value
        table["value"] = table["value"].astype(float)
    return table


def compare(name: str, keys: list[str], published_dir) -> int:
    """Every published row of an exact method has our row with equal values (to 1e-9, angles
    1e-6; a value the published table lacks, NaN there, is not compared; the tie-sensitive
    columns of the clean outlier sweep, drfidelity.crosscheck.comparison.TIE_COLUMNS, are left out);
    returns the number of values compared."""
    ours, published = read(REPO / "results" / "studies" / name), read(published_dir / name)
    published = published[published["method"].isin(EXACT)]
    if "supported" in published:
        published = published[published["supported"]]
    if "metric" in published:
        published = published[~published["metric"].map(lambda m: exempt(name, m))]
    merged = published.merge(ours, on=keys, how="left", suffixes=("_pub", ""),
                             validate="one_to_one", indicator=True)
    missing = merged[merged["_merge"] != "both"][keys]
    assert missing.empty, f"{name}: published rows without ours: {missing.values.tolist()[:5]}"
    compared = 0
    values = [c for c in published.columns if c not in keys and c not in NOT_VALUES
              and c in ours.columns and not exempt(name, c)]
    for column in values:
        a, b = merged[column].to_numpy(float), merged[f"{column}_pub"].to_numpy(float)
        assert not (np.isnan(a) & ~np.isnan(b)).any(), f"{name} {column}: ours NaN"
        both = ~np.isnan(a) & ~np.isnan(b)
        gap = np.abs(a[both] - b[both])
        bad = gap > tolerance(column)
        assert not bad.any(), (f"{name} {column}: {merged.loc[both][bad][keys].values[:3]} "
                               f"differ by up to {gap.max():.3g}")
        compared += int(both.sum())
    return compared


@pytest.mark.parametrize("name", sorted({**PER_RUN_KEYS, **AGGREGATED_KEYS}))
def test_committed_table_equals_the_published_one_for_exact_methods(name, published_results):
    keys = {**PER_RUN_KEYS, **AGGREGATED_KEYS}[name]
    assert compare(name, keys, published_results) > 20


def test_thousands_of_cells_reproduce_exactly(published_results):
    total = sum(compare(name, keys, published_results)
                for name, keys in {**PER_RUN_KEYS, **AGGREGATED_KEYS}.items())
    assert total > 5000


def test_new_rows_are_marked():
    """DREAMS is in the sweeps now (the previous release left it out): its rows say so."""
    for name in ("sweep_outliers_per_run.csv", "sweep_populations_per_run.csv"):
        table = read(REPO / "results" / "studies" / name)
        assert (table["new"] == (table["method"] == "DREAMS")).all()
        assert (table["method"] == "DREAMS").any()


def test_addplot_lists_every_method_with_the_unsupported_ones_explained():
    table = read(REPO / "results" / "studies" / "addplot_per_run.csv")
    notes = dict(zip(table.loc[~table["supported"], "method"],
                     table.loc[~table["supported"], "note"]))
    assert notes == {"PyMDE": "pymde optimizes fit coordinates; no transform",
                     "PCC": "pccdr optimizes fit coordinates; no transform",
                     "t-SNE": "sklearn TSNE has no out-of-sample transform"}
    assert set(table["method"]) == {"PCA", "Isomap", "PyMDE", "PCC", "t-SNE", "UMAP", "DREAMS",
                                    "toorPIA"}


# ---------------------------------------------- the stages on small data (conftest's small_run)

def test_every_table_is_written_with_the_published_columns(small_run, published_results):
    from drfidelity.studies import all_studies

    run_columns = {f"{pair.per_run}.csv": pair.run_columns for spec in all_studies()
                   for pair in spec.tables}
    for name in {**PER_RUN_KEYS, **AGGREGATED_KEYS}:
        ours = read(small_run / "results" / "studies" / name)
        if ours.empty and name in run_columns:
            # nothing to score (toorPIA's embedding arm has no map at this size): the header
            # of the pair's declared run columns, written by its own stage alone
            assert set(run_columns[name]) <= set(ours.columns), name
            continue
        published = pd.read_csv(published_results / name, nrows=0)
        legacy = {c for c in published.columns if "cluster_ratio" in c or c.startswith("osp")
                  or c.startswith("iso_rank") or c.startswith("log2_osp")}
        # the probe inputs have no outliers: their OSP block is absent, as in a fresh run
        assert set(published.columns) - legacy <= set(ours.columns), name
    # toorPIA runs on every noise-dims input, but has no csvform maps at this size: skipped,
    # with the reason, not invented
    dims = read(small_run / "results" / "studies" / "dimsweep_per_run.csv")
    assert set(dims["method"]) == {"PCA", "Isomap", "t-SNE", "DREAMS"}
    status = json.loads((small_run / "embeddings/studies/noise_dims/toorPIA/dim6/status.json").read_text())
    assert status["methods"]["toorPIA"]["status"] == "skipped"


def test_a_study_s_maps_are_recorded_with_the_sha256_of_their_files(maps_run):
    """And read back as written, by the same job's map names the score stage uses."""
    import hashlib

    from drfidelity.core.job import Job
    from drfidelity.studies.run.scoring import load_maps

    base = maps_run / "embeddings/studies/random_walk"
    record = json.loads((base / "PCA/status.json").read_text())
    data = (base / "PCA/PCA/seed0.npy").read_bytes()
    assert record["maps"] == {"PCA/seed0.npy": {
        "method": "PCA", "seed": 0, "sha256": hashlib.sha256(data).hexdigest()}}
    [(job, Y)], skipped, _ = load_maps((Job.of("PCA", 0),), base, "", record["data_fingerprint"])
    assert job == Job.of("PCA", 0) and not skipped
    assert np.array_equal(Y, np.load(base / "PCA/PCA/seed0.npy"))


def test_hyperparams_at_the_defaults_remake_the_main_maps(small_run):
    """The study generates the main input again (no dependency on a main dataset that may not
    be configured): the same bytes, and at the default settings the same maps."""
    np.testing.assert_array_equal(np.load(small_run / "data/studies/hyperparams/density/X.npy"),
                                  np.load(small_run / "data/density/X.npy"))
    for seed in (0, 1):
        np.testing.assert_array_equal(
            np.load(small_run / f"embeddings/studies/hyperparams/t-SNE/density/t-SNE/perplexity=30/"
                                f"seed{seed}.npy"),
            np.load(small_run / f"embeddings/density/t-SNE/seed{seed}.npy"))
    rows = read(small_run / "results" / "studies" / "hyperparam_sensitivity_per_run.csv")
    assert sorted(rows["value"].unique()) == [5, 30]


def test_every_study_follows_methods_and_datasets():
    """`-S datasets=[clusters]` or `-S 'methods=[PCA,UMAP]'` alone is honoured by every study:
    what they leave out is skipped with a note, never an error asking for a second override."""
    from drfidelity.core.params import parse_params
    from drfidelity.studies import all_studies, study

    raw = yaml.safe_load((REPO / "params.yaml").read_text())
    params = parse_params({**raw, "datasets": ["clusters"], "methods": ["PCA", "UMAP"]})
    for spec in all_studies():
        methods = {job.method for config in spec.configs(params) for job in config.jobs}
        assert methods <= {"PCA", "UMAP"}, spec.name
    hyper = study("hyperparams")
    assert [c.key for c in hyper.configs(params)] == ["clusters"]
    assert hyper.study_notes(params) == ["dataset density skipped: not in `datasets`",
                                   "method t-SNE skipped: not in `methods`",
                                   "method DREAMS skipped: not in `methods`"]
    none = parse_params({**raw, "datasets": ["transition"]})
    assert hyper.configs(none) == []


def test_one_job_equals_two_jobs(small_run, tmp_path):
    """The shared run made its maps one job at a time, in this process; a pool of two workers
    gives the same bytes: for a main dataset's method, for a study of several inputs, and for the
    hyper-parameter study (their tables too). Every stage in a pool: the slow
    test_the_command_line_in_fresh_processes_gives_the_shared_runs_bytes."""
    root = copy_run(small_run, tmp_path / "two-jobs")
    maps = ["embeddings/outliers/t-SNE", "embeddings/studies/noise_dims",
            "embeddings/studies/hyperparams"]
    tables = [f"results/studies/{name}" for name in (
        "dimsweep_per_run.csv", "dimsweep_aggregated.csv", "hyperparam_sensitivity_per_run.csv")]
    for part in maps:
        shutil.rmtree(root / part)
    for part in tables:
        (root / part).unlink()
    commands = [command for command in pipeline_commands(root)
                if command == ["embed", "outliers/t-SNE"]
                or any(study in word for study in ("noise_dims", "dimsweep", "hyperparams")
                       for word in command)]
    run_commands(root, commands, jobs=2)
    for part in maps:
        expected = tree_digest(small_run, part)
        assert len(expected) > 2 and tree_digest(root, part) == expected, part
    for part in tables:
        assert (root / part).read_bytes() == (small_run / part).read_bytes(), part


def test_removing_a_method_or_a_seed_updates_every_table(small_run, tmp_path):
    root = copy_run(small_run, tmp_path / "fewer")
    set_params(root, methods=["PCA", "t-SNE"], seeds=1)
    stale = stage(root, "study_score", "sweep_outlier_factor/sweep_outliers", check=False)
    assert stale.returncode == 2 and "study_embed again" in stale.stderr
    run_commands(root, pipeline_commands(root))
    for name in PER_RUN_KEYS:
        before = read(small_run / "results" / "studies" / name)
        table = read(root / "results" / "studies" / name)
        if name.startswith("hyperparam"):
            assert set(before["seed"]) == {0, 1} and set(table["seed"]) == {0}
            continue
        if name == "dimsweep_embedding_per_run.csv":  # toorPIA's embedding arm alone
            assert before.empty and table.empty  # skipped here: no cached map
            continue
        if "supported" in table:  # the add-plot test lists the methods that cannot run
            before, table = before[before["supported"]], table[table["supported"]]
        assert {"Isomap", "DREAMS"} & set(before["method"]), name
        assert set(table["method"]) <= {"PCA", "t-SNE"}, name
        assert set(table["seed"]) <= {0}, name


def test_noise_dims_grids_follow_params():
    """v1.4.0's probe: the generic methods on `dims`, toorPIA's two endpoints also on
    `toorpia_dims` (D = 768), its CSV-form endpoint alone on the extra dims x data seeds."""
    from drfidelity.core.params import ParamsError, load_params, parse_params
    from drfidelity.studies import study

    params = load_params(REPO / "releases" / "v1.4.0" / "params.yaml")
    jobs = {c.key: sorted((j.name, j.seed) for j in c.jobs)
            for c in study("noise_dims").configs(params)}
    assert list(jobs) == ["dim6", "dim40", "dim80", "dim200", "dim300", "dim400", "dim500",
                          "dim768", "dim2000", "dim2000_ds0", "dim2000_ds1", "dim2000_ds2",
                          "dim2000_ds3", "dim6000", "dim6000_ds0", "dim6000_ds1", "dim6000_ds2",
                          "dim6000_ds3"]
    toorpia = [("toorPIA", 0), ("toorPIA", 1), ("toorPIA", 2)]
    assert jobs["dim768"] == [*toorpia, ("toorPIA-embedding", 0)]
    assert jobs["dim6000_ds3"] == toorpia
    assert {label for label, _ in jobs["dim500"]} == {*params.methods, "toorPIA-embedding"}
    raw = yaml.safe_load((REPO / "params.yaml").read_text())
    overlap = {**raw["studies"]["noise_dims"], "toorpia_dims": [768]}
    with pytest.raises(ParamsError, match=r"studies.noise_dims.toorpia_dims repeats \[768\]"):
        study("noise_dims").configs(parse_params(
            {**raw, "studies": {**raw["studies"], "noise_dims": overlap}}))


def test_unknown_or_bad_study_keys_are_named():
    """An unknown study at params load; a bad key or value of a study's section where the
    study loads (before any input is built)."""
    from drfidelity.core.params import ParamsError, parse_params
    from drfidelity.studies import study

    raw = yaml.safe_load((REPO / "params.yaml").read_text())
    bad = [({"noise_dim": {}}, r"unknown key studies.noise_dim \(did you mean 'noise_dims'"),
           ({"random_walk": {**raw["studies"]["random_walk"], "lagg": 3}},
            r"studies.random_walk.lagg \(did you mean 'lag'"),
           ({"sweep_outlier_factor": {"values": [1.5, "big"]}},
            r"studies.sweep_outlier_factor.values\[1\] must be a number"),
           ({"hyperparams": {"datasets": ["spirals"], "grid": {}}},
            r"studies.hyperparams.datasets: unknown dataset 'spirals'"),
           ({"hyperparams": {"datasets": ["density"], "grid": {"t-SNE": {"perplexity": [-1]}}}},
            r"perplexity")]
    from drfidelity.registry import NAMES  # as the stages that list studies check params

    for change, message in bad:
        with pytest.raises(ParamsError, match=message):
            params = parse_params({**raw, "studies": {**raw["studies"], **change}},
                                  NAMES)
            study(next(iter(change))).configs(params)


def test_noise_dims_rotated_end_to_end(tmp_path):
    """`rotated: true` on a small probe: the stages make and score the rotated twins, whose
    rows sit beside the axis-aligned ones; PCA and Isomap see only distances, so their rotated
    rows score the same, and toorPIA is left out of them with its reason."""
    from drfidelity.core.params import load_params
    from drfidelity.report import kit
    from drfidelity.report.document import to_markdown
    from drfidelity.report.studies import StudyResults
    from drfidelity.studies import noise_dims
    from pipeline_helpers import stage_here, workspace
    from scipy.spatial.distance import pdist

    root = workspace(tmp_path / "rotated", data__n=90, seeds=1, bootstrap__n_boot=50,
                     methods=["PCA", "Isomap", "toorPIA"])
    set_params(root, studies__noise_dims__rotated=True)
    stage_here(root, "study_inputs", "noise_dims")
    for method in ("PCA", "Isomap", "toorPIA"):
        stage_here(root, "study_embed", f"noise_dims/{method}", jobs=1)
    for pair in ("dimsweep", "dimsweep_embedding"):
        stage_here(root, "study_score", f"noise_dims/{pair}")

    axis, twin = (np.load(root / f"data/studies/noise_dims/{key}/X.npy") for key in ("dim20", "dim20_rot"))
    np.testing.assert_allclose(pdist(twin), pdist(axis), rtol=1e-12)
    assert np.abs(twin - axis).max() > 0.5
    assert not (root / "embeddings/studies/noise_dims/toorPIA/dim20_rot").exists() or not json.loads(
        (root / "embeddings/studies/noise_dims/toorPIA/dim20_rot/status.json").read_text())["methods"]

    rows = read(root / "results/studies/dimsweep_per_run.csv")
    assert set(rows["method"]) == {"PCA", "Isomap", "PCA-rotated", "Isomap-rotated"}
    metrics = [c for c in noise_dims.METRICS if c in rows]
    for method in ("PCA", "Isomap"):
        ours = rows[rows["method"] == method].set_index("dim")[metrics].sort_index()
        turned = rows[rows["method"] == f"{method}-rotated"].set_index("dim")[metrics]
        np.testing.assert_allclose(turned.sort_index().to_numpy(float), ours.to_numpy(float),
                                   atol=1e-6, err_msg=method)

    aggregated = read(root / "results/studies/dimsweep_aggregated.csv")
    s = StudyResults({"dimsweep_aggregated": aggregated}, params=load_params(root / "params.yaml"))
    table = noise_dims.table(aggregated, None, kit.KIT)
    assert [label for label, _ in table.rows] == ["PCA", "PCA (rotated)", "Isomap",
                                                  "Isomap (rotated)"]
    text = to_markdown(noise_dims.section(s, kit.KIT))
    assert "The signal sits in the first 3 columns, axis-aligned" in text
    assert "rows marked (rotated)" in text and noise_dims.TOORPIA_NOT_ROTATED in text
    caption = noise_dims.paper_tables(s, kit, s.params)["noise_dims.tex"]
    assert "rows marked (rotated)" in caption and "PCA (rotated)" in caption


def test_a_vendor_draw_missing_for_some_seeds_costs_those_seeds_alone(tmp_path, capsys):
    """toorPIA's CSV-form endpoint cannot be asked for more maps than it stored: with two
    stored draws on one input and three seeds asked, that input keeps its two maps (scored,
    aggregated over two runs, said in the report), the third seed is named with its reason,
    and an input with no draw at all is skipped whole."""
    from drfidelity.core.params import load_params
    from drfidelity.methods.external import EmbedContext, store
    from drfidelity.report import kit
    from drfidelity.report.document import to_markdown
    from drfidelity.report.studies import StudyResults
    from drfidelity.studies import noise_dims, study
    from pipeline_helpers import stage_here, workspace

    root = workspace(tmp_path / "draws", data__n=90, seeds=3, bootstrap__n_boot=50,
                     methods=["PCA", "toorPIA"])
    stage_here(root, "study_inputs", "noise_dims")
    config = next(c for c in study("noise_dims").configs(load_params(root / "params.yaml"))
                  if c.key == "dim20")
    X = np.load(root / "data/studies/noise_dims/dim20/X.npy")
    rng = np.random.default_rng(0)
    for seed in (0, 1):
        store(rng.normal(size=(len(X), 2)), X, EmbedContext(root, *config.context), "toorpia",
              "fit", seed, {"endpoint": "a test's stored draw"})
    stage_here(root, "study_embed", "noise_dims/toorPIA", jobs=1)
    stage_here(root, "study_embed", "noise_dims/PCA", jobs=1)
    status = json.loads((root / "embeddings/studies/noise_dims/toorPIA/dim20/status.json")
                        .read_text())["methods"]["toorPIA"]
    assert status["status"] == "ok" and status["seeds"] == [0, 1]
    assert list(status["skipped"]) == ["2"] and "seed2.npy" in status["skipped"]["2"]
    whole = json.loads((root / "embeddings/studies/noise_dims/toorPIA/dim6/status.json")
                       .read_text())["methods"]["toorPIA"]
    assert whole["status"] == "skipped" and "seeds" not in whole

    capsys.readouterr()
    stage_here(root, "study_score", "noise_dims/dimsweep")
    assert "toorPIA on dim20: seeds 2 not run: no cache at" in capsys.readouterr().out
    rows = read(root / "results/studies/dimsweep_per_run.csv")
    assert sorted(rows[rows["method"] == "toorPIA"]["seed"]) == [0, 1]
    aggregated = read(root / "results/studies/dimsweep_aggregated.csv")
    assert set(aggregated[aggregated["method"] == "toorPIA"]["n_runs"]) == {2}
    assert set(aggregated[aggregated["method"] == "PCA"]["n_runs"]) == {1}

    s = StudyResults({"dimsweep_aggregated": aggregated}, params=load_params(root / "params.yaml"))
    text = to_markdown(noise_dims.section(s, kit.KIT))
    assert ("toorPIA (CSV-form endpoint)'s row stands on its 2 stored draws per input, not the "
            "3 seeds") in text
