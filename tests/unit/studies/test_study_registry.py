"""One module per study: every spec is complete and wired, no module outside ``studies/``
names a study, and a study registered in one place (its module and its name in
``STUDY_NAMES``) runs through every stage: its maps, its tables, its DVC metrics and curve,
its figure, its report section and its comparison with the published tables."""

from __future__ import annotations

import ast
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml

from drfidelity.core.layout import (RELEASES, STUDIES, study_data_dir, study_embeddings_dir,
                                    study_table_path)
from drfidelity.core.params import parse_params
from drfidelity.registry import NAMES, STUDY_NAMES
from drfidelity.studies import all_studies, study
from drfidelity.studies.spec import (Config, FigureKit, ReportKit, ScoringKit, StudySpec,
                                     TablePair, method_jobs)
from drfidelity.studies.run import wiring

from pipeline_helpers import REPO

SRC = REPO / "src" / "drfidelity"
COMMITTED = yaml.safe_load((REPO / "params.yaml").read_text())


@pytest.mark.parametrize("name", STUDY_NAMES)
def test_every_spec_is_complete(name):
    spec = study(name)
    assert spec.name == name and (SRC / "studies" / f"{name}.py").is_file()
    params = parse_params(COMMITTED, NAMES)
    written = set(COMMITTED["studies"][name])
    assert set(spec.settings(params)) == set(spec.schema) == written | set(spec.defaults)
    assert set(spec.defaults) <= set(spec.schema)
    assert spec.configs(params) and spec.stage_words and len(spec.reads) <= wiring.READS
    names = {n for pair in spec.tables for n in (pair.per_run, pair.aggregated)}
    assert set(spec.report_tables) <= names
    assert sum(pair.headline is not None for pair in spec.tables) == 1


def test_table_pairs_and_report_places_are_unique():
    stems = [pair.stem for spec in all_studies() for pair in spec.tables]
    orders = [spec.report_order for spec in all_studies()]
    assert len(set(stems)) == len(stems) and len(set(orders)) == len(orders)


def test_the_pipeline_files_are_written_from_the_registry(monkeypatch):
    """studies.yaml (the study stages' items) and method_code/ must say what the registry says
    (`python -m drfidelity.studies.run.wiring` writes both again)."""
    assert (REPO / "studies.yaml").read_text() == wiring.committed(REPO)
    monkeypatch.chdir(REPO)
    assert wiring.main(["--check"]) == 0


def test_only_the_methods_a_frozen_pipeline_runs_have_study_map_stages():
    """A registered method that neither the root's nor a later release's params.yaml runs (the
    living configuration's PaCMAP, TriMap and PHATE) has no study map stage in studies.yaml:
    it would make nothing, yet stand as a new stage in the frozen releases' ``dvc status``."""
    run = set()
    for params in [REPO / "params.yaml", *(REPO / "releases" / tag / "params.yaml"
                                           for tag in RELEASES[1:])]:
        run |= set(yaml.safe_load(params.read_text())["methods"])
    assert "PaCMAP" not in run
    maps = yaml.safe_load((REPO / "studies.yaml").read_text())["study_maps"]
    assert {item["method"] for item in maps.values()} == run
    assert wiring.committed_methods(REPO) == [name for name in NAMES.methods if name in run]


def test_the_kits_are_the_frozen_types_spec_declares():
    """A study's functions are handed a ScoringKit, a FigureKit and a ReportKit, declared in
    studies/spec.py: each stage's kit is of its type, frozen, and fills every field."""
    from dataclasses import FrozenInstanceError, fields

    from drfidelity.pipeline.study_figures import KIT as FIGURES
    from drfidelity.report.kit import KIT as REPORT
    from drfidelity.studies.run.scoring import KIT as SCORING

    for kit, kind in ((SCORING, ScoringKit), (FIGURES, FigureKit), (REPORT, ReportKit)):
        assert type(kit) is kind
        assert all(getattr(kit, f.name) is not None for f in fields(kind))
        with pytest.raises(FrozenInstanceError):
            setattr(kit, fields(kind)[0].name, None)


def test_a_study_reads_only_what_its_kits_declare():
    """Every ``kit.<name>`` in the studies' modules is a field of a kit of studies/spec.py."""
    from dataclasses import fields

    declared = {f.name for kind in (ScoringKit, FigureKit, ReportKit) for f in fields(kind)}
    used = {node.attr for path in (SRC / "studies").glob("*.py")
            for node in ast.walk(ast.parse(path.read_text()))
            if isinstance(node, ast.Attribute) and getattr(node.value, "id", None) == "kit"}
    assert used and used <= declared, sorted(used - declared)


def test_no_dataset_takes_the_name_of_the_studies_folder():
    """data/, embeddings/ and results/ hold a folder per dataset beside the studies' folder:
    a dataset of that name would share it."""
    from drfidelity.registry import DATASET_NAMES

    assert STUDIES not in DATASET_NAMES


def string_literals(path: Path) -> set[str]:
    """The string constants of a module, its docstrings left out."""
    tree = ast.parse(path.read_text())
    docstrings = {id(node.value) for node in ast.walk(tree) if isinstance(node, ast.Expr)
                  and isinstance(node.value, ast.Constant)}
    return {node.value for node in ast.walk(tree) if isinstance(node, ast.Constant)
            and isinstance(node.value, str) and id(node) not in docstrings}


def test_no_module_outside_the_studies_names_a_study():
    """What differs between studies lives in their modules; the stages, the report, the
    comparison and the CLI read it from the specs. The names are registered in
    drfidelity/registry.py; two studies share their name with the dataset they probe."""
    from drfidelity.registry import DATASET_NAMES

    tables = {name for spec in all_studies() for pair in spec.tables
              for name in (pair.stem, pair.per_run, pair.aggregated)}
    words = {*STUDY_NAMES, *tables, *(f"{name}.csv" for name in tables)} - set(DATASET_NAMES)
    allowed = {SRC / "registry.py"}
    found = {(path.relative_to(SRC).as_posix(), literal)
             for path in SRC.rglob("*.py")
             if path.relative_to(SRC).parts[0] != "studies" and path not in allowed
             for literal in string_literals(path) & words}
    assert found == set()


# ------------------------------------------------------------------------- a toy study

def toy_inputs(params, settings):
    def build(data, spread):
        rng = np.random.default_rng(params.data_seed)
        return {"X": rng.normal(scale=spread, size=(settings["n"], 5))}

    return [Config(f"{spread:g}", {"spread": spread},
                   lambda data, spread=spread: build(data, spread), None,
                   method_jobs(params, f"{spread:g}"))
            for spread in settings["spreads"]]


def toy_readouts(config, arrays, runs, kit):
    high_d = kit.Reference(arrays["X"], per_point=False)
    return [{"full_shepard": high_d.score(Y)["full_shepard"]} for _, Y in runs]


TOY_PAIR = TablePair("toy", ("full_shepard",), compare_keys=("spread", "method", "seed"),
                     compare_group=("method", "spread", "metric"),
                     headline=(("spread",), ("full_shepard",)),
                     curve=("spread", ("method",), ("full_shepard",)))


def toy_tabulate(params, per_run, kit):
    return {TOY_PAIR.per_run: per_run,
            TOY_PAIR.aggregated: kit.aggregate_grouped(per_run, ["method", "spread"],
                                                       ["full_shepard"], params)}


def toy_figures(params, root, drawn, kit):
    aggregated = kit.table(root, TOY_PAIR.aggregated)
    points = kit.arrays(study_data_dir(root, "toy") / "2", "X")
    found = kit.lowest_seed_maps(study_embeddings_dir(root, "toy"), "2")
    if aggregated is not None:
        drawn.add("toy_curve", kit.draw.sweep_curves(aggregated, "spread",
                                                     (("full_shepard", "full ρ"),), "spread",
                                                     []), "Toy blobs",
                  points=len(points["X"]), seeds=found[1])


def toy_section(s, kit):
    if TOY_PAIR.aggregated not in s.tables:
        return kit.not_built("Toy study", "the toy stage", TOY_PAIR.aggregated)
    leader, value = kit.leader(s.tables[TOY_PAIR.aggregated], "full_shepard", spread=2.0)
    return [kit.Heading(2, "Toy study"), *s.figure("toy_curve", "**Toy curve**."),
            kit.Para(f"Toy leader at spread 2: {leader} ({kit.fixed(value)}).")]


TOY = StudySpec(
    name="toy", schema={"spreads": [float], "n": int}, ranges={"n": (5, None, False)},
    inputs=toy_inputs, readouts=toy_readouts, tabulate=toy_tabulate, tables=(TOY_PAIR,),
    reads=("data.seed",), maps=None, stage_words="the toy stage", report_order=45,
    report_tables=(TOY_PAIR.aggregated,), figures=toy_figures, section=toy_section)


@pytest.fixture
def toy(monkeypatch):
    """The toy study, registered where a study is: its name in ``STUDY_NAMES``
    (drfidelity/registry.py) and its module ``drfidelity.studies.toy`` (here this test
    module)."""
    from dataclasses import replace

    from drfidelity import registry

    monkeypatch.setattr(sys.modules[__name__], "SPEC", TOY, raising=False)
    monkeypatch.setitem(sys.modules, "drfidelity.studies.toy", sys.modules[__name__])
    monkeypatch.setattr(registry, "STUDY_NAMES", (*registry.STUDY_NAMES, "toy"))
    monkeypatch.setattr(registry, "NAMES", replace(registry.NAMES, studies=registry.STUDY_NAMES))


def stage_deps(stage: str) -> list[str]:
    """The deps of a single stage of the root dvc.yaml: a new study's files are among them
    without an edit, since they depend on the studies' folders."""
    return yaml.safe_load((REPO / "dvc.yaml").read_text())["stages"][stage]["deps"]


def read_through_the_kit(monkeypatch, root: Path) -> set[str]:
    """The files and folders the toy's figures read through the stage's kit (filled in as
    the stage runs), relative to ``root``."""
    from dataclasses import replace

    from drfidelity.pipeline import study_figures

    KIT, reads = study_figures.KIT, set()

    def recorded(loader, where):
        def load(*args, **kwargs):
            path = where(*args).relative_to(root).as_posix()
            if "toy" in path:
                reads.add(path)
            return loader(*args, **kwargs)
        return load

    monkeypatch.setattr(study_figures, "KIT", replace(
        KIT, table=recorded(KIT.table, study_table_path),
        arrays=recorded(KIT.arrays, lambda folder, *names: folder),
        lowest_seed_maps=recorded(KIT.lowest_seed_maps, lambda base, key="", *more: base / key)))
    return reads


def test_a_study_registered_in_one_place_runs_through_every_stage(toy, tmp_path,
                                                                  monkeypatch):
    from drfidelity.crosscheck.comparison import tables
    from drfidelity.pipeline import run_stage

    raw = {**COMMITTED, "methods": ["PCA"], "seeds": 1,
           "studies": {**COMMITTED["studies"],
                           "toy": {"spreads": [1, 2.0], "n": 30}}}
    from drfidelity import registry

    params = parse_params(raw, registry.NAMES)
    assert study("toy").settings(params) == {"spreads": [1.0, 2.0], "n": 30}
    (tmp_path / "results").mkdir()
    for name in ("metrics_aggregated.csv", "metrics_per_run.csv", "skipped_methods.csv"):
        shutil.copyfile(REPO / "results" / name, tmp_path / "results" / name)
    monkeypatch.chdir(tmp_path)

    run_stage(params, "study_inputs", "toy", root=tmp_path)
    assert (tmp_path / "data/studies/toy/2/X.npy").exists()
    run_stage(params, "study_embed", "toy/PCA", root=tmp_path, jobs=1)
    assert (tmp_path / "embeddings/studies/toy/PCA/1/PCA/seed0.npy").exists()
    run_stage(params, "study_score", "toy/toy", root=tmp_path)
    per_run = (tmp_path / "results/studies/toy_per_run.csv").read_text().splitlines()
    assert per_run[0] == "spread,method,seed,stochastic,full_shepard" and len(per_run) == 3
    reads = read_through_the_kit(monkeypatch, tmp_path)
    run_stage(params, "study_figures", None, root=tmp_path)
    assert reads == {"results/studies/toy_aggregated.csv", "data/studies/toy/2",
                     "embeddings/studies/toy/2"}
    assert all(any(read.startswith(f"{dep}/") for dep in stage_deps("study_figures"))
               for read in reads)
    assert (tmp_path / "figures/studies/toy_curve.png").exists()
    headline = yaml.safe_load((tmp_path / "results/headline/toy.json").read_text())
    assert set(headline["PCA"]) == {"full_shepard@1", "full_shepard@2"}
    assert (tmp_path / "results/plots/toy.csv").read_text().startswith("series,spread,")
    run_stage(params, "report", None, root=tmp_path)
    report = (tmp_path / "REPORT.md").read_text()
    assert "## Toy study" in report and "Toy leader at spread 2: PCA" in report
    assert "figures/studies/toy_curve.png" in report
    assert report.index("## Toy study") < report.index("## Supplement — noise dimensions")

    assert "toy_per_run.csv" in {table.per_run for table in tables()}
    items = wiring.items()
    assert items["study_maps"]["toy-PCA"]["maps"] == ["src/drfidelity/studies/toy.py"] * 2
    assert items["study_tables"]["toy"]["study"] == "toy"
    assert "results/studies" in stage_deps("compare") and "results/studies" in stage_deps("report")
