"""``studies.yaml``: the items ``dvc.yaml``'s supplement stages loop over, written from the
registry, so that adding a study needs no edit of ``dvc.yaml``.

``python -m drfidelity.supplements.wiring > studies.yaml`` writes it again;
``tests/test_study_registry.py`` fails while the committed file differs. DVC lists have one
length, so each study's variable parts are padded: ``reads`` (the shared params keys it reads)
with ``methods``, which every study reads and DVC records once; ``maps`` (its toorPIA maps
folder and the manifest they are checked against) and ``helper`` (a private module of
``studies/`` the study's module imports, e.g. the sweeps' ``_sweep.py``) with the study's own
module, a dep the stage has anyway (DVC lists a dep twice harmlessly).
"""

from __future__ import annotations

import ast
import importlib
import sys

from drfidelity.studies import all_studies

#: the slots of ``reads`` in dvc.yaml
READS = 4
HEADER = """\
# Generated from the study registry (src/drfidelity/studies) by
#   python -m drfidelity.supplements.wiring > studies.yaml
# Do not edit: dvc.yaml's supplement stages loop over these (`vars`), and
# tests/test_study_registry.py checks that this file is current.
"""
CODE = "src/drfidelity/studies"
MANIFEST = "external_embeddings.manifest.json"


def own_module(name: str) -> str:
    return f"{CODE}/{name}.py"


def helper(name: str) -> str:
    """The private module of ``studies/`` that study ``name``'s module imports, or its own
    module (padding) when it imports none."""
    module = importlib.import_module(f"drfidelity.studies.{name}")
    with open(module.__file__, encoding="utf-8") as source:
        tree = ast.parse(source.read())
    private = sorted({node.module.rpartition(".")[2] for node in ast.walk(tree)
                      if isinstance(node, ast.ImportFrom) and node.module
                      and node.module.startswith("drfidelity.studies._")})
    if len(private) > 1:
        raise ValueError(f"study {name} imports {private}: dvc.yaml has one helper slot")
    return f"{CODE}/{private[0]}.py" if private else own_module(name)


def items() -> dict[str, dict]:
    """``studies`` (study -> its embed stage's variable parts) and ``tables`` (table pair ->
    its score stage's)."""
    studies, tables = {}, {}
    for spec in all_studies():
        if len(spec.reads) > READS:
            raise ValueError(f"study {spec.name} reads {len(spec.reads)} shared keys: "
                             f"dvc.yaml has {READS} slots")
        reads = [*spec.reads, *["methods"] * (READS - len(spec.reads))]
        maps = ([f"external_maps/{spec.maps}", MANIFEST] if spec.maps
                else [own_module(spec.name)] * 2)
        code = helper(spec.name)
        studies[spec.name] = {"maps": maps, "helper": code, "reads": reads}
        for pair in spec.tables:
            tables[pair.stem] = {"study": spec.name, "helper": code, "reads": list(reads)}
    return {"studies": studies, "tables": tables}


def render() -> str:
    import yaml

    return HEADER + yaml.safe_dump(items(), sort_keys=False, default_flow_style=None,
                                   width=100)


if __name__ == "__main__":
    sys.stdout.write(render())
