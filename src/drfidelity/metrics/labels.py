"""Label separation in a map: is the map useful downstream when classes are known?

These are usefulness checks, not faithfulness measures: a map can separate classes well while
distorting distances badly (and vice versa).

* :func:`knn_label_accuracy` — leave-one-out k-NN majority vote
  (``knn_acc_k10``);
* :func:`silhouette_2d` — mean silhouette of the labels in the map (Rousseeuw 1987);
* :func:`knn_classification_accuracy` — cross-validated k-NN classifier accuracy.
"""

from __future__ import annotations

import math

import numpy as np
from sklearn.metrics import silhouette_score
from sklearn.model_selection import StratifiedKFold, cross_val_score
from sklearn.neighbors import KNeighborsClassifier, NearestNeighbors


def _validate(Y, labels) -> tuple[np.ndarray, np.ndarray]:
    Y = np.asarray(Y, dtype=np.float64)
    labels = np.asarray(labels)
    if Y.ndim != 2 or Y.shape[0] < 2:
        raise ValueError(f"Y must be an (N, d) array with N >= 2, got shape {Y.shape}")
    if labels.shape != (Y.shape[0],):
        raise ValueError(f"labels must have shape ({Y.shape[0]},), got {labels.shape}")
    if not np.isfinite(Y).all():
        raise ValueError("Y must be finite (no NaN or inf)")
    return Y, labels


def knn_label_accuracy(Y, labels, k: int = 10) -> float:
    """Leave-one-out k-NN accuracy: share of points whose k nearest others vote their label.

    Neighbours from ``NearestNeighbors(n_neighbors=k+1)`` queried on the fitted points, first
    column (the point itself) dropped; k = min(k, N-1). The vote is a per-point label count
    whose argmax wins, so ties go to the smallest label.
    """
    Y, labels = _validate(Y, labels)
    if not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    k = min(k, Y.shape[0] - 1)
    classes, codes = np.unique(labels, return_inverse=True)
    neighbours = NearestNeighbors(n_neighbors=k + 1).fit(Y).kneighbors(Y, return_distance=False)
    votes = codes[neighbours[:, 1:]]
    counts = (votes[:, :, None] == np.arange(classes.shape[0])).sum(axis=1)
    return float(np.mean(np.argmax(counts, axis=1) == codes))


def silhouette_2d(Y, labels) -> float:
    """``sklearn.metrics.silhouette_score(Y, labels)`` (Euclidean); NaN unless 2 <= #labels < N."""
    Y, labels = _validate(Y, labels)
    n_labels = np.unique(labels).shape[0]
    if not 2 <= n_labels < Y.shape[0]:
        return float("nan")
    return float(silhouette_score(Y, labels))


def knn_classification_accuracy(Y, labels, k: int = 5, folds: int = 5, seed: int = 0) -> float:
    """Mean accuracy of a k-NN classifier over stratified ``folds``-fold cross-validation.

    Folds are shuffled with ``seed``, so the result is deterministic for given inputs. Every
    class needs at least ``folds`` members, and each training split more than ``k`` points.
    """
    Y, labels = _validate(Y, labels)
    if not isinstance(k, (int, np.integer)) or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    if not isinstance(folds, (int, np.integer)) or folds < 2:
        raise ValueError(f"folds must be an integer >= 2, got {folds!r}")
    _, class_sizes = np.unique(labels, return_counts=True)
    if class_sizes.min() < folds:
        raise ValueError(f"every label needs at least folds={folds} points for stratified "
                         f"cross-validation; the smallest class has {class_sizes.min()}")
    smallest_training_split = Y.shape[0] - math.ceil(Y.shape[0] / folds)
    if smallest_training_split < k:
        raise ValueError(f"k={k} exceeds the smallest training split ({smallest_training_split} "
                         f"points for N={Y.shape[0]}, folds={folds})")
    splitter = StratifiedKFold(n_splits=folds, shuffle=True, random_state=seed)
    scores = cross_val_score(KNeighborsClassifier(n_neighbors=k), Y, labels, cv=splitter)
    return float(np.mean(scores))
