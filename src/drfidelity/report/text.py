"""Titles of the datasets, shared by the figures, REPORT and paper."""

from __future__ import annotations

TITLES = {
    "density": "Non-uniform density",
    "clusters": "Distinct dense clusters",
    "transition": "Continuous closed-loop transition",
    "outliers": "Off-subspace outliers",
    "populations": "Imbalanced two populations",
    "random_walk": "High-dimensional random walks",
    "noise_dims": "Signal in a few dimensions among noise dimensions",
}
