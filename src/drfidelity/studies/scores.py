"""How each supplement scores the maps of one input: the metric columns of every run.

Each function takes the input (a :class:`~drfidelity.studies.registry.Config`), its arrays and
its (job, map) pairs, builds the high-D side once and returns one dict of metric columns per
run. Every readout comes from :mod:`drfidelity.metrics`.
"""

from __future__ import annotations

from typing import Any

from drfidelity.datasets.inputs import GROUND_TRUTH
from drfidelity.metrics import Reference
from drfidelity.metrics.addplot import anchored_metrics
from drfidelity.metrics.labels import knn_label_accuracy, silhouette_2d
from drfidelity.metrics.timeseries import random_walk_readouts
from drfidelity.studies.tables import HYPERPARAM_RUN_METRICS


def reference(arrays: dict) -> Reference:
    """The high-D side of the canonical column set without the per-point columns (the
    sweeps' and the noise-dims probe's rows), with whatever ground truth the input has."""
    truth = {kw: arrays[name] for kw, name in GROUND_TRUTH.items() if name in arrays}
    return Reference(arrays["X"], per_point=False, **truth)


def addplot(config, arrays: dict, runs) -> list[dict]:
    return [anchored_metrics(Y_fit, Y_add, arrays["X_fit"], arrays["X_add"],
                             arrays["labels_fit"], arrays["add_anchor"],
                             n_anom=len(arrays["add_anchor"]))
            for _, (Y_fit, Y_add) in runs]


def random_walk(config, arrays: dict, runs) -> list[dict]:
    n, d = arrays["X"].shape
    return [{"n": n, "d": d, **random_walk_readouts(arrays["X"], Y, arrays["series"],
                                                    arrays["t"], lag=config.ids["lag"])}
            for _, Y in runs]


def canonical(config, arrays: dict, runs) -> list[dict]:
    high_d = reference(arrays)
    return [high_d.score(Y) for _, Y in runs]


def noise_dims(config, arrays: dict, runs) -> list[dict]:
    high_d = reference(arrays)
    return [{**high_d.score(Y), "knn_acc_k10": knn_label_accuracy(Y, arrays["labels"]),
             "silhouette_2d": silhouette_2d(Y, arrays["labels"])} for _, Y in runs]


def knob_of(job) -> tuple[str, Any]:
    """(knob, value) of a hyper-parameter job, from its label ``method/knob=value``."""
    knob = job.name.split("/", 1)[1].split("=", 1)[0]
    return knob, job.kwargs[knob]


def hyperparams(config, arrays: dict, runs) -> list[dict]:
    high_d = Reference(arrays["X"], per_point=False)
    rows = []
    for job, Y in runs:
        knob, value = knob_of(job)
        scores = high_d.score(Y)
        rows.append({"knob": knob, "value": value,
                     **{m: scores[m] for m in HYPERPARAM_RUN_METRICS}})
    return rows


SCORES = {"addplot": addplot, "random_walk": random_walk, "sweep_outlier_factor": canonical,
          "sweep_minority_frac": canonical, "noise_dims": noise_dims,
          "hyperparams": hyperparams}
