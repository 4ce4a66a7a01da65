"""Bridge gaps on the transition dataset: is each bridge between two states drawn unbroken?

For neighbouring states i and j = i+1 (mod n_states) with point sets A and B, and the bridge
points S of that edge, the *bottleneck gap* is the smallest r at which A and B are connected by
single linkage (a chain of hops of length <= r) through A u B u S. It equals the largest edge on
the minimum-spanning-tree path between the two sets, found by adding the MST edges in increasing
length to a union-find until some component holds points of both A and B (Kruskal).

Per bridge "i-j": ``gap``; ``gap_nn`` = gap / median nearest-neighbour distance of all map
points; ``gap_ratio`` = gap / ||mean(A) - mean(B)||; ``torn`` = gap_ratio > 1/3.
"""

from __future__ import annotations

import numpy as np
from scipy.sparse.csgraph import minimum_spanning_tree
from scipy.spatial import cKDTree
from scipy.spatial.distance import squareform

from .distances import condensed_distances

TORN_RATIO = 1.0 / 3.0


def _find(parent: np.ndarray, a: int) -> int:
    while parent[a] != a:
        parent[a] = parent[parent[a]]
        a = parent[a]
    return a


def bottleneck_gap(A: np.ndarray, B: np.ndarray, S: np.ndarray) -> float:
    """Smallest single-linkage radius joining point sets A and B through A u B u S (exact).

    scipy's MST treats zero distances as missing edges, so coincident points are merged in the
    union-find first; the MST edges then give the same connectivity as all pairs at every r.
    """
    points = np.concatenate([A, B, S])
    n_a, n_b = A.shape[0], B.shape[0]
    distances = squareform(condensed_distances(points, "euclidean", "Y"))
    parent = np.arange(points.shape[0])
    has_a = np.arange(points.shape[0]) < n_a
    has_b = (np.arange(points.shape[0]) >= n_a) & (np.arange(points.shape[0]) < n_a + n_b)
    tree = minimum_spanning_tree(distances).tocoo()
    zero_i, zero_j = np.nonzero(np.triu(distances == 0, 1))
    edges = [(0.0, i, j) for i, j in zip(zero_i, zero_j)]
    order = np.argsort(tree.data, kind="stable")
    edges += [(tree.data[e], tree.row[e], tree.col[e]) for e in order]
    for weight, i, j in edges:
        root_i, root_j = _find(parent, i), _find(parent, j)
        if root_i == root_j:
            continue
        parent[root_j] = root_i
        has_a[root_i] |= has_a[root_j]
        has_b[root_i] |= has_b[root_j]
        if has_a[root_i] and has_b[root_i]:
            return float(weight)
    raise RuntimeError("unreachable: the spanning tree plus the zero-length pairs connect all")


def bridge_gaps(Y, labels, t, n_states: int = 7) -> list[dict[str, object]]:
    """One row per cyclic bridge "i-j": gap, gap_nn, gap_ratio, torn (module docstring).

    ``labels`` hold the state id 0..n_states-1, or -1 for bridge points; ``t`` (in [0, 1)) places
    a bridge point of edge i strictly between i/n_states and (i+1)/n_states (the last edge takes
    every bridge point with t > (n_states-1)/n_states).
    """
    Y = np.asarray(Y, dtype=np.float64)
    labels = np.asarray(labels)
    t = np.asarray(t, dtype=np.float64)
    if Y.ndim != 2 or Y.shape[0] < 2 or not np.isfinite(Y).all():
        raise ValueError(f"Y must be a finite (N, d) map with N >= 2, got shape {Y.shape}")
    if labels.shape != (Y.shape[0],) or t.shape != (Y.shape[0],):
        raise ValueError(f"labels and t must have shape ({Y.shape[0]},), got {labels.shape} "
                         f"and {t.shape}")
    if not isinstance(n_states, (int, np.integer)) or n_states < 2:
        raise ValueError(f"n_states must be an integer >= 2, got {n_states!r}")
    missing = [s for s in range(n_states) if not np.any(labels == s)]
    if missing:
        raise ValueError(f"labels has no points for states {missing}")
    nn_distance = cKDTree(Y).query(Y, k=2)[0][:, 1]
    median_nn = float(np.median(nn_distance))
    on_bridge = labels == -1
    rows = []
    for i in range(n_states):
        j = (i + 1) % n_states
        if i < n_states - 1:
            in_edge = on_bridge & (t > i / n_states) & (t < (i + 1) / n_states)
        else:
            in_edge = on_bridge & (t > (n_states - 1) / n_states)
        A, B = Y[labels == i], Y[labels == j]
        gap = bottleneck_gap(A, B, Y[in_edge])
        gap_ratio = gap / np.linalg.norm(A.mean(axis=0) - B.mean(axis=0))
        rows.append({"bridge": f"{i}-{j}", "gap": gap, "gap_nn": gap / median_nn,
                     "gap_ratio": float(gap_ratio), "torn": bool(gap_ratio > TORN_RATIO)})
    return rows
