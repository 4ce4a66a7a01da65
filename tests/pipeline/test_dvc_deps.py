"""Every stage depends on the code it runs, and on no code it does not run.

A stage's ``cmd`` is ``drfidelity stage NAME ...``: the CLI, then ``drfidelity.pipeline.NAME``.
Every ``drfidelity`` module reachable from there by ``import`` statements (at any depth, in
functions too; a package's ``__init__`` runs whenever one of its modules is imported; the
loaders below read their whole package) must be covered by one of the stage's ``deps`` (the
file itself or a folder above it); otherwise an edit there could change the stage's outputs
while ``dvc status`` says it is up to date. The other direction: every code dep names a module
the stage imports, or a folder holding one, so an edit elsewhere never reruns the stage.
"""

from __future__ import annotations

import ast
import itertools
import re
from pathlib import Path

import pytest
import yaml

from pipeline_helpers import REPO

SRC = REPO / "src"

#: Import edges that no ``drfidelity stage`` command executes: the CLI's ``score`` subcommand.
OFF_THE_STAGE_PATH = {("drfidelity.cli", "drfidelity.metrics.cli")}


def module_file(name: str) -> Path | None:
    base = SRC.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


#: Modules that load others by name at run time, and what importing them therefore reads: a
#: spec looked up in ``DATASETS`` imports its dataset's module (the names alone are in
#: drfidelity.registry).
LOADERS = {"drfidelity.datasets.registry": "drfidelity.datasets"}
#: The job runs the wrapper of its method (``Method.wrapper``): a map stage of one method (a
#: matrix item of dvc.yaml) loads that method's wrapper alone, any other stage every wrapper.
METHOD_LOADER = "drfidelity.methods.base"
#: The spec loader finds a method's spec by its name (``specs/<key>.py``): a map stage of one
#: method loads that method's spec alone (a study it runs builds that method's jobs alone:
#: ``Params.only``), any other stage every registered method's.
SPEC_LOADER = "drfidelity.method_specs"
#: The study registry loads a study's module by name: the stage of one study (a ``foreach``
#: item of dvc.yaml) loads that study alone, any other stage every registered study.
STUDY_LOADER = "drfidelity.studies"
#: The job executor: what decides where and when a job runs (the process pool, the forkserver,
#: a Dask cluster, memory admission) and records how long it took, never what it computes
#: (drfidelity.methods.base.run_job).
#: No stage depends on it, so an edit there reruns nothing; in exchange
#: tests/pipeline/test_executor_paths.py proves that every path makes the same bytes. What it
#: imports is still followed.
EXECUTOR = {"drfidelity.jobs.runner", "drfidelity.jobs.fresh", "drfidelity.jobs.cluster",
            "drfidelity.jobs.memory", "drfidelity.jobs.times"}


def package_modules(package: str) -> set[str]:
    folder = SRC.joinpath(*package.split("."))
    return {".".join(p.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__")
            for p in folder.glob("*.py")}


def lazy_exports(package: str) -> dict[str, str]:
    """A package's ``_LAZY`` table (public name -> module: a submodule, or one named in full),
    loaded on first access."""
    path = module_file(package)
    for node in ast.parse(path.read_text()).body:
        if (isinstance(node, ast.Assign) and getattr(node.targets[0], "id", None) == "_LAZY"):
            return {k: v if "." in v else f"{package}.{v}"
                    for k, v in ast.literal_eval(node.value).items()}
    return {}


def static_nodes(tree: ast.AST):
    """Every node of ``tree`` except the bodies of ``if TYPE_CHECKING:`` (never executed)."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and getattr(child.test, "id", None) == "TYPE_CHECKING":
                todo.extend(child.orelse)
            else:
                todo.append(child)


def imported_modules(name: str) -> set[str]:
    """The ``drfidelity`` modules that module ``name`` runs by importing them (statically,
    anywhere in it), with what the loaders and lazy exports read on its behalf."""
    path = module_file(name)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in static_nodes(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[:len(parts) - node.level + 1] + ([node.module]
                                                                       if node.module else []))
            else:
                base = node.module
            names = {alias.name for alias in node.names}
            found.add(base)
            found.update(f"{base}.{n}" for n in names)
            if module_file(base) and module_file(base).name == "__init__.py":
                lazy = lazy_exports(base)
                found.update(lazy[n] for n in names if n in lazy)
    for loader, loaded in LOADERS.items():
        if loader in found:
            found.update(package_modules(loaded))
    return {m for m in found if m.split(".")[0] == "drfidelity" and module_file(m)}


def study_modules() -> set[str]:
    from drfidelity.registry import STUDY_NAMES

    return {f"drfidelity.studies.{name}" for name in STUDY_NAMES}


def with_parents(name: str) -> set[str]:
    parts = name.split(".")
    return {".".join(parts[:i]) for i in range(1, len(parts) + 1)}


def wrapper_modules(methods: list[str] | None = None) -> set[str]:
    """The wrapper modules of ``methods`` (default: every registered method)."""
    from drfidelity.core.method import wrapper_module
    from drfidelity.registry import METHOD_NAMES

    return {wrapper_module(name) for name in (methods or METHOD_NAMES)}


def spec_modules(methods: list[str] | None = None) -> set[str]:
    """The spec modules of ``methods`` (default: every registered method)."""
    from drfidelity.core.method import spec_module
    from drfidelity.registry import METHOD_NAMES

    return {spec_module(name) for name in (methods or METHOD_NAMES)}


def closure(*entries: str, studies: set[str] | None = None,
            wrappers: set[str] | None = None, specs: set[str] | None = None) -> set[Path]:
    """The files of the modules that ``entries`` run; the study registry loads ``studies``
    (default: every registered study), the job ``wrappers`` and the spec loader ``specs``
    (default: every method's)."""
    studies = study_modules() if studies is None else studies
    wrappers = wrapper_modules() if wrappers is None else wrappers
    specs = spec_modules() if specs is None else specs
    seen: set[str] = set()
    todo = [m for entry in entries for m in with_parents(entry)]
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        loaded = {STUDY_LOADER: studies, METHOD_LOADER: wrappers,
                  SPEC_LOADER: specs}.get(name, set())
        for other in imported_modules(name) | loaded:
            if (name, other) not in OFF_THE_STAGE_PATH:
                todo.extend(with_parents(other))
    return {module_file(m).relative_to(REPO) for m in seen - EXECUTOR}


def substitute(value, key: str, item: dict):
    """``value`` (a stage definition or part of one) with ``${key}`` and ``${item...}``
    replaced as DVC's ``foreach`` does."""
    if isinstance(value, dict):
        return {substitute(k, key, item): substitute(v, key, item) for k, v in value.items()}
    if isinstance(value, list):
        return [substitute(v, key, item) for v in value]
    if not isinstance(value, str):
        return value

    def lookup(match: re.Match) -> str:
        path = match.group(1)
        if path == "key":
            return key
        found = item
        for part in re.findall(r"\.?(\w+)|\[(\d+)\]", path.removeprefix("item")):
            name, index = part
            found = found[int(index)] if index else found[name]
        return str(found)

    return re.sub(r"\$\{(key|item[^}]*)\}", lookup, value)


def stages() -> dict[str, dict]:
    """dvc.yaml's stages, each ``foreach`` item and ``matrix`` combination (over params.yaml's
    values) as a stage ``name@key`` of its own, with what it loads by name (``study``,
    ``method``), and the template of each under its name."""
    document = yaml.safe_load((REPO / "dvc.yaml").read_text())
    variables = yaml.safe_load((REPO / "params.yaml").read_text())
    for path in document.get("vars", []):
        variables.update(yaml.safe_load((REPO / path).read_text()))
    result = {}
    for name, definition in document["stages"].items():
        if "foreach" in definition:
            template = definition["do"]
            items = variables[definition["foreach"].strip("${}")]
        elif "matrix" in definition:
            template = {k: v for k, v in definition.items() if k != "matrix"}
            axes = {axis: variables[values.strip("${}")]
                    for axis, values in definition["matrix"].items()}
            items = {"-".join(combination): dict(zip(axes, combination))
                     for combination in itertools.product(*axes.values())}
        else:
            result[name] = definition
            continue
        result[name] = template
        for key, item in items.items():
            stage = substitute(template, key, item)
            if "foreach" in definition:
                stage["study"] = item.get("study", key)
            if "method" in item:
                stage["method"] = item["method"]
            result[f"{name}@{key}"] = stage
    return result


def code_files(dep: Path) -> list[Path]:
    """What a dep hashes of the code: the files its links point to for a folder of links
    (method_code/<method>), else the path itself."""
    folder = REPO / dep
    links = sorted(folder.iterdir()) if folder.is_dir() else []
    if links and all(link.is_symlink() for link in links):
        return [link.resolve().relative_to(REPO) for link in links]
    return [dep]


def stage_closure(name: str) -> tuple[list[Path], set[Path]]:
    """(the code the stage's deps hash, the code its command imports)."""
    definition = stages()[name]
    command = definition["cmd"].split()
    assert command[:2] == ["drfidelity", "stage"], definition["cmd"]
    assert command[2] == name.partition("@")[0], f"block {name} runs `drfidelity stage {command[2]}`"
    deps = [f for d in definition.get("deps", []) for f in code_files(Path(d))]
    studies = {f"drfidelity.studies.{definition['study']}"} if "study" in definition else None
    method = [definition["method"]] if "method" in definition else None
    return deps, closure("drfidelity.cli", f"drfidelity.pipeline.{command[2]}", studies=studies,
                         wrappers=method and wrapper_modules(method),
                         specs=method and spec_modules(method))


#: the stages checked: every stage, each foreach item on its own (a template is checked
#: through its items)
CHECKED = sorted(name for name, d in stages().items() if "${" not in str(d.get("deps")))


def test_closure_follows_relative_and_nested_imports():
    files = {p.as_posix() for p in closure("drfidelity.pipeline.embed")}
    assert "src/drfidelity/methods/pymde.py" in files          # a wrapper, loaded by name
    assert "src/drfidelity/method_specs/pymde.py" in files    # a spec, loaded by name
    assert "src/drfidelity/methods/__init__.py" in files        # parent package
    assert "src/drfidelity/core/params.py" in files


@pytest.mark.parametrize("name", CHECKED)
def test_stage_depends_on_its_whole_import_closure(name):
    deps, needed = stage_closure(name)
    missing = sorted(p.as_posix() for p in needed
                     if not any(p == d or d in p.parents for d in deps))
    assert not missing, f"stage {name} reads code that is not among its deps: {missing}"


@pytest.mark.parametrize("name", CHECKED)
def test_stage_code_deps_are_code_it_runs(name):
    deps, needed = stage_closure(name)
    unread = sorted(d.as_posix() for d in deps if d.parts[0] == "src"
                    and not any(p == d or d in p.parents for p in needed))
    assert not unread, f"stage {name} depends on code it never imports: {unread}"


@pytest.mark.parametrize("name", CHECKED)
def test_no_stage_depends_on_the_executor(name):
    """Not even through a folder: a comment in the job runner leaves every stage up to date."""
    deps, _ = stage_closure(name)
    executor = [module_file(m).relative_to(REPO) for m in sorted(EXECUTOR)]
    hashed = sorted(f.as_posix() for f in executor if any(f == d or d in f.parents for d in deps))
    assert not hashed, f"stage {name} depends on the executor: {hashed}"


def test_the_executor_is_on_the_embedding_stages_path():
    """The exclusion is not vacuous: the stages that make maps run the executor, and what a job
    computes (run_job, the wrappers) is still among their deps."""
    assert "drfidelity.jobs.runner" in imported_modules("drfidelity.pipeline.embed")
    assert "drfidelity.jobs.runner" in imported_modules("drfidelity.studies.run.embedding")
    assert Path("src/drfidelity/methods/base.py") in closure("drfidelity.pipeline.embed")


def test_method_wrappers_load_only_where_methods_run():
    """Validating params and ordering tables reads the registry and the specs, never a wrapper
    nor the job (the package's ``__init__`` is the specs' parent, and loads neither)."""
    wrappers = {p.relative_to(REPO) for p in (SRC / "drfidelity" / "methods").glob("*.py")
                if p.name != "__init__.py"}
    for name in ("generate", "score", "aggregate", "figures", "report", "compare",
                 "study_score", "study_figures"):
        assert not closure("drfidelity.cli", f"drfidelity.pipeline.{name}") & wrappers, name


def test_map_stages_read_no_list_of_names():
    """A map stage finds its method (and study) by name: neither the registry of names nor
    another method's spec or wrapper is in its closure, so adding or editing another method,
    a dataset or a study leaves it up to date (tests/pipeline/test_dvc_narrowing.py)."""
    for name in ("embed@density-UMAP", "study_embed@hyperparams-UMAP"):
        _, files = stage_closure(name)
        found = {p.as_posix() for p in files}
        assert "src/drfidelity/registry.py" not in found, name
        assert "src/drfidelity/method_specs/umap.py" in found, name
        assert not {f for f in found if f.startswith("src/drfidelity/methods/")
                    and f.rsplit("/", 1)[1] in ("pca.py", "tsne.py")}, name


def test_report_layer_imports_no_stage():
    """The report (and every library package) sits below the stages and the CLI."""
    for path in (SRC / "drfidelity").rglob("*.py"):
        name = ".".join(path.relative_to(SRC).with_suffix("").parts).removesuffix(".__init__")
        if name.startswith(("drfidelity.pipeline", "drfidelity.cli", "drfidelity.__main__")):
            continue
        above = {m for m in imported_modules(name)
                 if m.startswith(("drfidelity.pipeline", "drfidelity.cli"))}
        assert not above, f"{name} imports {sorted(above)}"


@pytest.mark.parametrize("package", ["drfidelity.methods", "drfidelity.datasets",
                                     "drfidelity.metrics"])
def test_lazy_names_are_defined_where_the_closure_looks(package):
    """A package's lazily served names (what the closure above follows) live in the submodule
    its ``_LAZY`` table names."""
    import importlib

    module = importlib.import_module(package)
    for name, home in lazy_exports(package).items():
        assert getattr(module, name) is getattr(importlib.import_module(home), name), name
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        getattr(module, "nope")
