"""The registered datasets, methods and studies in the tables' order: what the pipeline and the
report need to know of them, and the one place a new one is named.

Only the stages that list or order names read this module (generate, score, aggregate, the
figures, the report, compare, the studies' inputs and tables...); a map stage finds its one
method, dataset or study by name alone (:func:`drfidelity.method_specs.spec`,
:mod:`drfidelity.datasets.registry`, :func:`drfidelity.studies.study`), so adding a name here
leaves every existing map stage up to date. Kept out of ``core/`` for the same reason: every
stage depends on that folder.
"""

from __future__ import annotations

from drfidelity.core.method import Method, Names
from drfidelity.method_specs import spec

#: Benchmark datasets in the ``--dataset all`` order, then the two probes; each is the module
#: ``drfidelity.datasets.<name>`` defining its ``SPEC``.
DATASET_NAMES = ("density", "transition", "clusters", "outliers", "populations", "random_walk",
                 "noise_dims")
#: The benchmark's methods in canonical (table-tie) order; each is the module
#: ``drfidelity.method_specs.<key>`` defining its ``SPEC`` (``t-SNE`` -> ``tsne``:
#: :func:`~drfidelity.core.method.method_key`).
METHOD_NAMES = ("PCA", "Isomap", "PyMDE", "PCC", "t-SNE", "UMAP", "DREAMS", "toorPIA",
                # the living benchmark's (issue 42), after the frozen eight (whose ties stay
                # broken as before); neither frozen release's params.yaml runs them
                "PaCMAP", "TriMap", "PHATE")
#: The studies, in the order of their stages and tables; each is the module
#: ``drfidelity.studies.<name>`` defining its ``SPEC`` (all of them:
#: :func:`drfidelity.studies.all_studies`).
STUDY_NAMES = ("addplot", "random_walk", "sweep_outlier_factor", "sweep_minority_frac",
               "noise_dims", "hyperparams")

#: Every method's spec, in canonical order.
METHODS: dict[str, Method] = {name: spec(name) for name in METHOD_NAMES}
#: What ``params.yaml`` is checked against by the stages that read this module.
NAMES = Names(datasets=DATASET_NAMES, methods=METHODS, studies=STUDY_NAMES)


def get_method(name: str) -> Method:
    """The registered method called ``name``; a clear error lists the known names."""
    try:
        return METHODS[name]
    except KeyError:
        raise ValueError(f"unknown method {name!r}; known methods: {', '.join(METHODS)}") from None

