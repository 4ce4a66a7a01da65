"""What ``dvc.yaml`` needs to know about the studies and the methods, written from the registries,
so that adding a study or a method is its module, its registry line and its params, and never a
hand edit of the pipeline.

* ``studies.yaml``: the items the study stages loop over (``vars``).
* ``method_code/<method>/``: links to the modules that the method's jobs run: of
  ``src/drfidelity/methods`` the package, the job (:data:`JOB_MODULES`), its wrapper, and of
  ``src/drfidelity/method_specs`` the loader and its spec (both found from its name:
  :func:`drfidelity.core.method.method_key`), with what these import of the two packages. A
  map stage depends on its method's folder, because DVC's templates cannot map a method's
  name to its files; DVC hashes the files the links point to. A link of ``method_specs`` is
  named ``method_specs-<file>`` (``method_specs-umap.py``).

The single stages that read every study (``compare``, ``study_figures``, ``report``) depend on
the studies' folders (``data/studies``, ``embeddings/studies``, ``results/studies``), so nothing
of theirs is generated.

``python -m drfidelity.studies.run.wiring`` writes both in place (``--check``: writes nothing,
exits 1 naming each stale file); ``tests/unit/studies/test_study_registry.py`` fails while any
differs.
DVC cannot interpolate a list into a stage's list (a ``params`` or ``deps`` entry is one
string: "Cannot interpolate data of type 'list'"), so each study's variable parts in
``studies.yaml`` fill fixed slots: ``reads`` (the shared params keys it reads) is filled up
with ``methods``, which every study reads and DVC records once; ``maps`` (its toorPIA maps
folder and the manifest they are checked against) and ``helper`` (a private module of
``studies/`` the study's module imports, e.g. the sweeps' ``_sweep.py``) with the study's own
module, a dep the stage has anyway (DVC lists a dep twice harmlessly).
"""

from __future__ import annotations

import argparse
import ast
import importlib
import os
import shutil
import sys
from pathlib import Path
from typing import Collection

from drfidelity.core.method import spec_module, wrapper_module
from drfidelity.registry import METHODS
from drfidelity.studies import all_studies

#: the slots of ``reads`` in dvc.yaml
READS = 4
HEADER = """\
# Generated from the study registry (src/drfidelity/studies) by
#   python -m drfidelity.studies.run.wiring > studies.yaml
# Do not edit: dvc.yaml's study stages loop over these (`vars`), and
# tests/unit/studies/test_study_registry.py checks that this file is current.
"""
CODE = "src/drfidelity/studies"
MANIFEST = "external_embeddings.manifest.json"
METHOD_CODE = Path("method_code")
METHODS_PACKAGE = Path("src/drfidelity/methods")
#: the modules that every job runs: the package, the job itself (base.run_job, which loads the
#: spec and the wrapper by name) and the spec loader
JOB_MODULES = ("drfidelity.methods", "drfidelity.methods.base", "drfidelity.method_specs")
#: the packages whose modules a job may run (what method_code/<method>/ links to)
JOB_PACKAGES = ("drfidelity.methods", "drfidelity.method_specs")


def own_module(name: str) -> str:
    return f"{CODE}/{name}.py"


def _tree(module: str) -> ast.Module:
    path = importlib.import_module(module).__file__
    with open(path, encoding="utf-8") as source:
        return ast.parse(source.read())


def _private_helpers(name: str) -> list[str]:
    tree = _tree(f"drfidelity.studies.{name}")
    return sorted({node.module.rpartition(".")[2] for node in ast.walk(tree)
                   if isinstance(node, ast.ImportFrom) and node.module
                   and node.module.startswith("drfidelity.studies._")})


def helper(name: str) -> str:
    """The private module of ``studies/`` that study ``name``'s module imports, or its own
    module (padding) when it imports none."""
    private = _private_helpers(name)
    if len(private) > 1:
        raise ValueError(f"study {name} imports {private}: dvc.yaml has one helper slot")
    return f"{CODE}/{private[0]}.py" if private else own_module(name)


def items(methods: Collection[str] | None = None) -> dict[str, dict]:
    """``study_inputs`` (study -> its inputs stage's variable parts), ``study_maps``
    (``<study>-<method>`` -> its map stage's, for every registered method or those of
    ``methods``: the committed pipelines' (:func:`committed_methods`) or a small run's copy's)
    and ``study_tables`` (table pair -> its score stage's)."""
    mapped = [name for name in METHODS if methods is None or name in methods]
    studies, study_maps, tables = {}, {}, {}
    for spec in all_studies():
        if len(spec.reads) > READS:
            raise ValueError(f"study {spec.name} reads {len(spec.reads)} shared keys: "
                             f"dvc.yaml has {READS} slots")
        reads = [*spec.reads, *["methods"] * (READS - len(spec.reads))]
        maps = ([f"external_maps/{spec.maps}", MANIFEST] if spec.maps
                else [own_module(spec.name)] * 2)
        code = helper(spec.name)
        studies[spec.name] = {"helper": code, "reads": reads}
        for method in mapped:
            study_maps[f"{spec.name}-{method}"] = {"study": spec.name, "method": method,
                                                   "maps": list(maps), "helper": code,
                                                   "reads": list(reads)}
        for pair in spec.tables:
            tables[pair.stem] = {"study": spec.name, "helper": code, "reads": list(reads)}
    return {"study_inputs": studies, "study_maps": study_maps, "study_tables": tables}


def method_modules(name: str) -> list[Path]:
    """The files of the modules that method ``name``'s jobs run: :data:`JOB_MODULES`, its
    spec and wrapper and, at any depth, the modules of :data:`JOB_PACKAGES` these import."""
    todo = [*JOB_MODULES, spec_module(name), wrapper_module(name)]
    seen: set[str] = set()
    while todo:
        module = todo.pop()
        if module in seen:
            continue
        seen.add(module)
        package = module if _file(module).name == "__init__.py" else module.rpartition(".")[0]
        for node in ast.walk(_tree(module)):
            if not isinstance(node, ast.ImportFrom):
                continue
            parts = package.split(".")
            base = (".".join(parts[:len(parts) - node.level + 1]
                             + ([node.module] if node.module else []))
                    if node.level else node.module or "")
            todo += [m for m in (base, *(f"{base}.{a.name}" for a in node.names))
                     if m.startswith(JOB_PACKAGES) and _file(m) is not None]
    return sorted(_file(m) for m in seen)


def _file(module: str) -> Path | None:
    """The source file of ``module`` below ``src/``, or None for a name that is no module."""
    base = Path("src", *module.split("."))
    return next((p for p in (base.with_suffix(".py"), base / "__init__.py") if p.is_file()), None)


def method_links(name: str) -> dict[str, str]:
    """The links of ``method_code/<name>/``: file name -> relative target."""
    return {(p.name if p.parent == METHODS_PACKAGE else f"{p.parent.name}-{p.name}"):
            os.path.relpath(p, METHOD_CODE / name) for p in method_modules(name)}


def _links_of(folder: Path) -> dict[str, str | None]:
    if not folder.is_dir():
        return {}
    return {p.name: os.readlink(p) if p.is_symlink() else None for p in folder.iterdir()}


def write_method_code(check: bool) -> list[str]:
    """Bring ``method_code/`` in line with the registry (``check``: change nothing); return
    the folders that were not."""
    stale = []
    folders = {p.name for p in METHOD_CODE.iterdir()} if METHOD_CODE.is_dir() else set()
    for name in sorted(folders | set(METHODS)):
        folder = METHOD_CODE / name
        want = method_links(name) if name in METHODS else {}
        if _links_of(folder) == want:
            continue
        stale.append(folder.as_posix())
        if check:
            continue
        shutil.rmtree(folder, ignore_errors=True)
        if want:
            folder.mkdir(parents=True)
            for link, target in want.items():
                (folder / link).symlink_to(target)
    return stale


def committed_methods(root: Path = Path(".")) -> list[str]:
    """The registered methods that a frozen pipeline runs (named in ``methods`` of the root's
    ``params.yaml`` or of a later release's, ``releases/<tag>/params.yaml``), in the registry's
    order: the committed ``studies.yaml`` has the study map stages of these alone. A method
    that no frozen pipeline runs (the living configuration's PaCMAP, TriMap and PHATE) gets
    none: its stages would make nothing, yet stand as new in the frozen releases' ``dvc
    status`` (and be recorded in their locks by the next rebuild)."""
    import yaml

    from drfidelity.core.layout import RELEASES, release_root

    run = set()
    for tag in RELEASES:
        params = release_root(root, tag) / "params.yaml"
        run |= set(yaml.safe_load(params.read_text(encoding="utf-8"))["methods"])
    return [name for name in METHODS if name in run]


def render(methods: Collection[str] | None = None, *, small: bool = True) -> str:
    """The text of ``studies.yaml`` with the map stages of ``methods`` alone (a method the run
    leaves out would only add stages that make nothing): a small run's copy (``small``, which
    its first lines say), the committed one (:func:`committed`) or, without ``methods``, every
    registered method's."""
    import yaml

    only = ("" if methods is None or not small else
            f"# A small run's copy: the map stages of {', '.join(methods)} alone.\n")
    return HEADER + only + yaml.safe_dump(items(methods), sort_keys=False,
                                          default_flow_style=None, width=100)


def committed(root: Path = Path(".")) -> str:
    """The text of the committed ``studies.yaml`` (in ``root``, the folder of the root
    ``dvc.yaml``): the study map stages of :func:`committed_methods`."""
    return render(committed_methods(root), small=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m drfidelity.studies.run.wiring",
        description="Write studies.yaml and the folders of links method_code/<method>/ from "
                    "the registries (run in the folder of the root dvc.yaml).")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 naming each file that is not current")
    args = parser.parse_args(argv)
    stale = []
    path = Path("studies.yaml")
    old, new = path.read_text(encoding="utf-8") if path.exists() else "", committed()
    if new != old:
        stale.append(path.name)
        if not args.check:
            path.write_text(new, encoding="utf-8")
    stale += write_method_code(args.check)
    if args.check and stale:
        print(f"not current: {', '.join(stale)} (python -m drfidelity.studies.run.wiring "
              "writes them)", file=sys.stderr)
        return 1
    for name in stale:
        print(f"wrote {name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
