"""What the score stage reads off a dataset's maps beside :meth:`Reference.score`.

Each is a thin composition of the measures of this package, kept here rather than in the stage
so that the stage only loads, loops and writes:

* :data:`READOUTS`: a dataset's probe columns, selected by its spec's ``readouts`` kind (the
  trajectory readouts where series and time are known, the label separation of the map);
* :func:`stability_row`: the run-to-run spread of one method's maps;
* :func:`noise_ceiling`: the noise-free geometry scored as if it were a map.
"""

from __future__ import annotations

from drfidelity.aggregation import finite_std

from .labels import knn_label_accuracy, silhouette_2d
from .stability import mean_pairwise_disparity, position_dispersion
from .timeseries import random_walk_readouts

#: per-run metrics whose spread over runs (population std) the stability table reports
STABILITY_METRICS = ("full_shepard", "full_stress_fidelity", "shepard_p5__vs_ambient",
                     "shepard_p100__vs_truth", "recall_k15")


def _trajectory(arrays: dict, Y) -> dict[str, float]:
    return random_walk_readouts(arrays["X"], Y, arrays["series"], arrays["t"])


def _label_separation(arrays: dict, Y) -> dict[str, float]:
    return {"knn_acc_k10": knn_label_accuracy(Y, arrays["labels"]),
            "silhouette_2d": silhouette_2d(Y, arrays["labels"])}


#: readout kind (``DatasetSpec.readouts``) -> the per-run columns it adds
READOUTS = {"trajectory": _trajectory, "labels": _label_separation}


def probe_readouts(kind: str | None, arrays: dict, Y) -> dict[str, float]:
    """The columns of readout ``kind`` for map ``Y`` of the dataset ``arrays`` ({} for None)."""
    return READOUTS[kind](arrays, Y) if kind else {}


def stability_row(maps: list, runs: list[dict]) -> dict[str, float]:
    """Procrustes dispersion and disparity of the maps (ordered by seed) and the spread of the
    headline metrics over the same runs."""
    return {"n_runs": len(maps), "position_dispersion": position_dispersion(maps),
            "mean_pairwise_disparity": mean_pairwise_disparity(maps),
            **{f"{m}__std": finite_std([r.get(m, float("nan")) for r in runs])
               for m in STABILITY_METRICS}}


def noise_ceiling(reference, arrays: dict) -> dict[str, float]:
    """The truth's scores as a map against the ambient data, without the columns against the
    truth itself (1 by construction); {} without a truth."""
    if "X_truth" not in arrays:
        return {}
    return {key: value for key, value in reference.score(arrays["X_truth"]).items()
            if not key.endswith("__vs_truth")}
