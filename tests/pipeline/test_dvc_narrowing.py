"""Each stage depends on exactly what it reads: an edit reruns only the stages that read it.

Measured with DVC itself: a copy of the pipeline with the committed ``dvc.lock`` (no data
needed), one edit, and ``dvc status --json``; a stage counts as stale when one of its code or
params dependencies changed (its data are not in the copy, which DVC reports separately).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from pipeline_helpers import PIPELINE_FILES, REPO, copy_from_checkout, env, import_pointers, run

EMBEDDING = {"embed", "study_embed"}
#: the datasets the committed params.yaml runs (the figures stage's matrix)
DATASETS_RUN = yaml.safe_load((REPO / "params.yaml").read_text())["datasets"]


@pytest.fixture
def pipeline(tmp_path) -> Path:
    """The pipeline definition, its lock and code, in a fresh git + DVC repository."""
    root = tmp_path / "pipeline"
    copy_from_checkout(root, PIPELINE_FILES + import_pointers() + ["dvc.lock"])
    shutil.copytree(REPO / "src", root / "src", ignore=shutil.ignore_patterns("__pycache__"))
    run(["git", "init", "-q"], root)
    run(["dvc", "init", "-q"], root)
    return root


def record_code_as_it_is(root: Path, pipelines=("dvc.yaml",)) -> None:
    """Write into ``root``'s dvc.lock (and each of ``pipelines``' lock) the hashes of every stage's code deps (``src/``,
    ``method_code/``) as they are in the copy, as a rebuild would: the stages' data and params
    entries stay the committed ones. An edit is then measured against this checkout's code
    even while the committed lock lags behind it (what it shows is the shape of the deps;
    that the lock is current is test_the_copy_starts_up_to_date's business)."""
    from dvc.repo import Repo

    paths = {pipeline: (root / pipeline).with_suffix(".lock") for pipeline in pipelines}
    locks = {pipeline: yaml.safe_load(path.read_text()) for pipeline, path in paths.items()}
    with Repo(str(root)) as repo:
        for stage in repo.index.stages:
            pipeline = Path(stage.dvcfile.path).relative_to(root).as_posix()
            entry = locks.get(pipeline, {"stages": {}})["stages"].get(stage.name)
            if entry is None:
                continue
            kept = {dep["path"]: dep for dep in entry.get("deps", [])}
            deps = []
            for dep in stage.deps:
                if not code(dep.def_path):
                    if dep.def_path in kept:
                        deps.append(kept[dep.def_path])
                    continue
                dep.save()
                record = {"path": dep.def_path, "hash": "md5", "md5": dep.hash_info.value,
                          "size": dep.meta.size}
                if dep.meta.isdir:
                    record["nfiles"] = dep.meta.nfiles
                deps.append(record)
            entry["deps"] = deps
    for pipeline, path in paths.items():
        path.write_text(yaml.safe_dump(locks[pipeline], sort_keys=False))


def code(path: str) -> bool:
    """Whether a dep path (of the root's or a release's dvc.yaml) is code."""
    return path.lstrip("./").startswith(("src/", "method_code/"))


def stale(root: Path) -> dict[str, set[str]]:
    """Stage -> the code paths and params keys of it that changed since the lock."""
    report = json.loads(run(["dvc", "status", "--no-updates", "--json"], root).stdout or "{}")
    found = {}
    for stage, entries in report.items():
        changed = set()
        for entry in entries:
            for path, what in entry.get("changed deps", {}).items() if isinstance(entry, dict) \
                    else ():
                if isinstance(what, dict):
                    changed |= {f"{path}:{key}" for key in what}
                elif code(path):
                    changed.add(path)
        if changed:
            found[stage] = changed
    return found


def kind(stage: str) -> str:
    return stage.split("@")[0]


def test_the_copy_starts_up_to_date(pipeline):
    assert stale(pipeline) == {}


@pytest.mark.parametrize("module, methods", [("umap.py", {"UMAP"}), ("toorpia.py", {"toorPIA"}),
                                             ("torch_setup.py", {"PyMDE", "PCC"})])
def test_editing_a_method_module_reruns_only_its_methods_maps(pipeline, module, methods):
    """A wrapper (or a module it imports) is a dep of its own method's map stages alone; what
    scores the maps reruns through their bytes, which a comment leaves as they were."""
    record_code_as_it_is(pipeline)
    with (pipeline / "src/drfidelity/methods" / module).open("a") as source:
        source.write("# a comment\n")
    lock = yaml.safe_load((REPO / "dvc.lock").read_text())["stages"]
    assert set(stale(pipeline)) == {s for s in lock if kind(s) in EMBEDDING
                                    and s.partition("@")[2].split("-", 1)[1] in methods}


@pytest.mark.parametrize("module", ["runner.py", "fresh.py", "cluster.py", "memory.py",
                                    "times.py"])
def test_editing_the_job_executor_reruns_nothing(pipeline, module):
    """Where and when a job runs is not what it computes (test_executor_paths.py)."""
    record_code_as_it_is(pipeline)
    with (pipeline / "src/drfidelity/jobs" / module).open("a") as source:
        source.write("# a comment\n")
    assert stale(pipeline) == {}


def test_editing_a_dataset_generator_leaves_the_study_maps_to_their_inputs(pipeline):
    """A study's inputs are a stage of their own: a generator edit reruns them, and their maps
    only through the inputs' bytes (unchanged by a comment), never through the code."""
    record_code_as_it_is(pipeline)
    with (pipeline / "src/drfidelity/datasets/clusters.py").open("a") as source:
        source.write("# a comment\n")
    changed = stale(pipeline)
    assert not {s for s in changed if kind(s) in EMBEDDING}
    assert {"generate@clusters", "study_inputs@hyperparams"} <= set(changed)


def test_editing_the_report_text_reruns_only_the_report(pipeline):
    record_code_as_it_is(pipeline)
    with (pipeline / "src/drfidelity/report/content.py").open("a") as source:
        source.write("# a comment\n")
    assert set(stale(pipeline)) == {"report"}


def test_editing_a_caption_reruns_only_the_report(pipeline):
    """The captions are the writing wing's (report/captions.py), written from each figure
    stage's facts.json: no figure stage reads them, so a caption edit redraws nothing."""
    record_code_as_it_is(pipeline)
    assert stale(pipeline) == {}
    with (pipeline / "src/drfidelity/report/captions.py").open("a") as source:
        source.write("# a comment\n")
    assert set(stale(pipeline)) == {"report"}


def test_editing_a_painter_leaves_the_report_up_to_date(pipeline):
    """The other direction: the drawing wing's painters are the figure stages' alone; the
    report reads only the settings its captions quote (figures/settings.py)."""
    record_code_as_it_is(pipeline)
    with (pipeline / "src/drfidelity/figures/dataset.py").open("a") as source:
        source.write("# a comment\n")
    assert set(stale(pipeline)) == {f"figures@{name}" for name in DATASETS_RUN}
    record_code_as_it_is(pipeline)
    with (pipeline / "src/drfidelity/figures/studies.py").open("a") as source:
        source.write("# a comment\n")
    assert set(stale(pipeline)) == {"study_figures"}


def test_a_new_snr_leaves_the_noise_free_studies_up_to_date(pipeline):
    record_code_as_it_is(pipeline)
    params = yaml.safe_load((pipeline / "params.yaml").read_text())
    params["data"]["snr"] = 4.0
    (pipeline / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    changed = stale(pipeline)
    studies = {s.partition("@")[2].split("-", 1)[0] for s in changed
               if kind(s) == "study_embed"}
    assert studies == {"addplot", "sweep_minority_frac", "hyperparams"}
    for table in ("random_walk", "dimsweep", "dimsweep_embedding", "sweep_outliers"):
        assert f"study_score@{table}" not in changed
    assert {"generate@density", "study_embed@addplot-UMAP"} <= set(changed)
    assert changed["generate@density"] == {"params.yaml:data"}


# Adding a method: the stages that list or order methods read it, no existing map stage does.
RELEASE = "releases/v1.4.0"
#: what adding a method writes: its spec and wrapper modules (found by its name), its name in
#: the registry and its params entry; `make wiring` then writes method_code/ and studies.yaml
NEW_SPEC = """from drfidelity.core.method import Method

SPEC = Method("Spectral", stochastic=False)
"""
NEW_WRAPPER = """def fit_spectral(X, seed, context=None):
    from sklearn.manifold import SpectralEmbedding

    return SpectralEmbedding(n_components=2, random_state=seed).fit_transform(X)
"""


@pytest.fixture
def both_pipelines(pipeline) -> Path:
    """The copy with the release's pipeline too (its dvc.yaml, lock and manifest, and the tool
    that writes its dvc.yaml), every code dep recorded as it is in the copy."""
    copy_from_checkout(pipeline, [f"{RELEASE}/dvc.yaml", f"{RELEASE}/dvc.lock",
                                  f"{RELEASE}/external_embeddings.manifest.json",
                                  "tools/release_pipeline.py"])
    record_code_as_it_is(pipeline, ("dvc.yaml", f"{RELEASE}/dvc.yaml"))
    assert stale(pipeline) == {}
    return pipeline


def add_method(root: Path, run_it: bool) -> None:
    """Register the method Spectral as docs/extending.md says (``run_it``: also name it in
    both pipelines' ``methods``), then write the wiring and the release's dvc.yaml."""
    (root / "src/drfidelity/method_specs/spectral.py").write_text(NEW_SPEC)
    (root / "src/drfidelity/methods/spectral.py").write_text(NEW_WRAPPER)
    registry = root / "src/drfidelity/registry.py"
    text = registry.read_text()
    assert LAST_NAME in text
    registry.write_text(text.replace(LAST_NAME, LAST_NAME[:-1] + ', "Spectral")'))
    for folder in (root, root / RELEASE):
        params = yaml.safe_load((folder / "params.yaml").read_text())
        params["method_params"]["Spectral"] = {}
        if run_it:
            params["methods"].append("Spectral")
        (folder / "params.yaml").write_text(yaml.safe_dump(params, sort_keys=False))
    wire(root)


#: the end of METHOD_NAMES in registry.py, where a new method's name goes
LAST_NAME = '"PaCMAP", "TriMap", "PHATE")'
LIVING = ("PaCMAP", "TriMap", "PHATE")


def map_stage(stage: str) -> bool:
    return kind(stage.rpartition(":")[2]) in EMBEDDING


def locked(root: Path) -> set[str]:
    """The stages of both pipelines that their locks record, as ``dvc status`` names them."""
    return {prefix + name for pipeline, prefix in (("dvc.yaml", ""), (f"{RELEASE}/dvc.yaml",
                                                                       f"{RELEASE}/dvc.yaml:"))
            for name in yaml.safe_load((root / pipeline).with_suffix(".lock").read_text())["stages"]}


def test_adding_a_method_leaves_every_map_stage_up_to_date(both_pipelines):
    """Its module, its spec, its name in the registry and its ``method_params`` entry: of both
    pipelines, the stages that list or order methods rerun (they read the registry, every spec
    or ``method_params`` as a whole); no existing map stage is stale, and no stage is new: a
    method no pipeline runs gets no study map stage (``wiring.committed_methods``).
    (docs/extending.md quotes the counts.)"""
    root = both_pipelines
    before = locked(root)
    add_method(root, run_it=False)
    found = stale(root)
    changed = {s: what for s, what in found.items() if s in before}
    assert changed and not {s for s in changed if map_stage(s)}, sorted(changed)
    kinds = {kind(s.rpartition(":")[2]) for s in changed}
    assert kinds == {"generate", "score", "aggregate", "headline", "study_inputs",
                     "study_score", "compare", "release_diff", "figures",
                     "study_figures", "report"}, kinds
    assert {"release_diff"} | {f"figures@{d}" for d in DATASETS_RUN} <= set(changed)
    assert f"{RELEASE}/dvc.yaml:report" in changed
    new = set(found) - before
    assert not new, sorted(new)
    print(f"adding a method: {len(changed)} existing stages stale "
          f"({sum(':' not in s for s in changed)} of dvc.yaml, "
          f"{sum(':' in s for s in changed)} of {RELEASE}), {len(new)} new stages")


def test_registering_the_living_methods_stales_only_the_listing_stages(pipeline):
    """This checkout's PaCMAP, TriMap and PHATE (issue 42), registered and run by neither
    frozen release: measured against the same copy without them (their modules, their names
    and links removed, the code recorded as it is there), both pipelines' stale stages are the
    ones that list or order methods (they read every spec), the same as for one added method;
    no map stage is stale or new, and neither params file changes."""
    root = pipeline
    copy_from_checkout(root, [f"{RELEASE}/dvc.yaml", f"{RELEASE}/dvc.lock",
                              f"{RELEASE}/external_embeddings.manifest.json",
                              "tools/release_pipeline.py"])
    for folder in (REPO, REPO / RELEASE):
        params = yaml.safe_load((folder / "params.yaml").read_text())
        assert not set(LIVING) & (set(params["methods"]) | set(params["method_params"]))
    registry = root / "src/drfidelity/registry.py"
    kept = {path: path.read_text() for path in
            [registry, *(root / "src/drfidelity" / package / f"{name.lower()}.py"
                         for package in ("methods", "method_specs") for name in LIVING)]}
    text = kept[registry]
    start = text.index('"toorPIA",', text.index("METHOD_NAMES = ("))
    registry.write_text(text[:start] + '"toorPIA")' + text[text.index(LAST_NAME) + len(LAST_NAME):])
    for path in kept:
        if path != registry:
            path.unlink()
    wire(root)
    assert not {name for name in LIVING if (root / "method_code" / name).exists()}
    record_code_as_it_is(root, ("dvc.yaml", f"{RELEASE}/dvc.yaml"))
    assert stale(root) == {}
    before = locked(root)
    for path, source in kept.items():
        path.write_text(source)
    wire(root)
    found = stale(root)
    changed = {s: what for s, what in found.items() if s in before}
    assert not set(found) - before, sorted(set(found) - before)
    assert changed and not {s for s in changed if map_stage(s)}, sorted(changed)
    assert {kind(s.rpartition(":")[2]) for s in changed} == {
        "generate", "score", "aggregate", "headline", "study_inputs", "study_score",
        "compare", "release_diff", "figures", "study_figures", "report"}
    assert all(what <= {"src/drfidelity/method_specs", "src/drfidelity/registry.py",
                        "../../src/drfidelity/method_specs", "../../src/drfidelity/registry.py"}
               for what in changed.values()), changed
    print(f"registering PaCMAP, TriMap, PHATE: {len(changed)} existing stages stale "
          f"({sum(':' not in s for s in changed)} of dvc.yaml, "
          f"{sum(':' in s for s in changed)} of {RELEASE}), none new")


def wire(root: Path) -> None:
    """``make wiring`` and the release's dvc.yaml, in the copy ``root``."""
    environment = {**env(), "PYTHONPATH": str(root / "src")}
    for command in (["-m", "drfidelity.studies.run.wiring"], ["tools/release_pipeline.py"]):
        done = subprocess.run([sys.executable, *command], cwd=root, env=environment,
                              capture_output=True, text=True)
        assert done.returncode == 0, done.stderr


def test_running_a_new_method_reruns_study_maps_only_through_methods(both_pipelines):
    """Naming it in ``methods`` too: the studies' map stages read that list (a study's inputs
    and the method's membership follow it), so they rerun through that params key alone,
    never through code; the main map stages (embed) read their own method's entry only."""
    root = both_pipelines
    before = locked(root)
    add_method(root, run_it=True)
    changed = {s: what for s, what in stale(root).items() if s in before}
    maps = {s: what for s, what in changed.items() if map_stage(s)}
    assert maps and all(kind(s.rpartition(":")[2]) == "study_embed" for s in maps)
    assert {what.rpartition("params.yaml:")[2] for found in maps.values() for what in found} \
        == {"methods"}, maps
    print(f"running a new method: {len(maps)} existing map stages stale through `methods` "
          f"(of {sum(map_stage(s) for s in before)}), {len(changed) - len(maps)} other stages")
