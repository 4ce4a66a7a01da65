"""The metric engine: one :class:`Reference` per dataset, :meth:`Reference.score` per embedding.

Everything on the high-D side (distance vectors, their sort orders, band radii, first-mode
thresholds, per-point pools, the tightest cluster, outlier and population pair families) is
computed once in the constructor, the neighbour lists once during the first score. Scoring an
embedding then costs one ``pdist`` of the 2-D points, one in-place sort of it, and per
reference vector one compiled pass along the 2-D order for every Shepard column (bands,
per-point pools, pair families) and two compiled passes for every band stress
(:mod:`.pair_kernels`); only these passes and their N^2/2-long inputs grow as N^2.

The input space X is an (N, D) feature matrix compared with any ``scipy.spatial.distance.pdist``
metric (default Euclidean), or, with ``metric="precomputed"`` (the scikit-learn convention), a
square (N, N) distance matrix. The embedding Y is (N, d), usually d = 2, and always Euclidean.
Coordinates beyond 2**±256 in magnitude are rescaled by a power of two first (exact, see
:func:`.inputs.unit_scaled`), and every distance is checked to be finite before a compiled pass
reads it.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, replace

import numpy as np

from . import bands
from .cluster_scale import TightCluster, cluster_scale, select_tightest
from .distances import condensed_distances, distance_rows
from .inputs import ReferenceInputs, check_map_points, reference_inputs, score_inputs
from .neighbours import K_VALUES, Neighbourhoods, neighbour_scores, threaded_map
from .outliers import OutlierSet, OutlierSpace, outlier_metrics, outlier_set, outlier_space
from .populations import population_weights
from .shepard import (PairSubsets, RankedDistances, ShepardPair, inverse_permutation,
                      per_point_sizes, per_point_subsets)
from .pair_kernels import scatter
from .stress import BandStress, fidelity

NEAR_MIN_PAIRS = 3
OUTLIER_RHO = "outlier_shepard__vs_ambient"

def _rows_of(d: np.ndarray, n: int):
    return lambda rows: distance_rows(d, n, rows)


@dataclass
class _BandReference:
    """One high-D reference vector (ambient or truth) with everything its band metrics need.

    The per-point pools (and, for the ambient vector, the outlier and population pair
    families) are bit planes in the vector's sorted order (see :class:`PairSubsets`), so one
    pass per embedding serves every Shepard column of this vector.
    """

    tag: str
    ranked: RankedDistances
    inverse: np.ndarray
    radii: dict
    band_sizes: dict
    near_fallback: bool
    stress: BandStress
    subsets: PairSubsets
    pools: int  # leading subsets that are per-point pools (the p100 pool is the p100 band)
    families: tuple = ()  # column names of the subsets after the pools
    squares: list | None = None  # the map-independent rank sums (ShepardPair.rhos)

    @classmethod
    def build(cls, tag: str, d: np.ndarray, n: int, per_point: bool) -> "_BandReference":
        ranked = RankedDistances(d)
        near_radius, fallback = bands.first_mode_threshold(d, ranked.order)
        radii = bands.percentile_thresholds(d, ranked.order)
        radii["near"] = near_radius
        stress = BandStress(d, list(radii.values()),
                            [NEAR_MIN_PAIRS if key == "near" else 2 for key in radii])
        band_sizes = dict(zip(radii, stress.band_sizes()))
        pools = 0
        subsets = PairSubsets([], d.shape[0])
        if per_point:
            pools = len(bands.PERCENTILES) - 1
            subsets = per_point_subsets(ranked.order, n,
                                        per_point_sizes(n, bands.PERCENTILES)[:pools])
        inverse = inverse_permutation(ranked.release_order())  # the inverse is all scoring needs
        return cls(tag, ranked, inverse, radii, band_sizes, fallback, stress, subsets, pools)

    def in_sorted_order(self, weights: np.ndarray) -> np.ndarray:
        """Condensed-order pair weights rearranged into this vector's sorted order."""
        return scatter(weights, self.inverse)

    def add_families(self, named_weights: dict) -> None:
        """Score the pair families {column: condensed 0/1 weights} in the same pass."""
        extra = PairSubsets.from_weights([self.in_sorted_order(w) for w in named_weights.values()])
        self.subsets = self.subsets + extra
        self.families = self.families + tuple(named_weights)
        self.squares = None

    def rhos(self, low: RankedDistances) -> tuple[dict, list]:
        """(band rho by band key, rho of every subset) for the map ranked in ``low``."""
        shepard = ShepardPair(self.ranked, self.inverse, low)
        keys = list(self.radii)
        sizes = [self.band_sizes[key] for key in keys]
        if self.squares is None:
            self.squares = self.ranked.squares(sizes, self.subsets)
        band_rho, subset_rho = shepard.rhos(sizes, self.subsets, self.squares)
        return dict(zip(keys, band_rho)), subset_rho

    def columns(self, rhos: tuple[dict, list], d_2d: np.ndarray) -> tuple[dict, dict, dict]:
        """(band block, per-point block, pair-family rhos) for one embedding."""
        tag = self.tag
        rho, subset_rho = rhos
        stress = dict(zip(self.radii, self.stress.stress(d_2d)))
        block = {f"shepard_p{p}__{tag}": rho[p] for p in bands.PERCENTILES}
        for p in bands.PERCENTILES:
            block[f"stress_p{p}__{tag}"] = stress[p]
            block[f"stress_fidelity_p{p}__{tag}"] = fidelity(stress[p])
        near_share = self.band_sizes["near"] / self.ranked.size
        block.update({f"shepard_near__{tag}": rho["near"],
                      f"stress_near__{tag}": stress["near"],
                      f"stress_fidelity_near__{tag}": fidelity(stress["near"]),
                      f"near_band_pct__{tag}": float(100.0 * near_share),
                      f"near_band_fallback__{tag}": 1.0 if self.near_fallback else 0.0})
        per_point = {}
        if self.pools:
            pooled = subset_rho[:self.pools] + [rho[100]]  # every pair twice: the p100 band
            per_point = {f"pp_shepard_p{p}__{tag}": value
                         for p, value in zip(bands.PERCENTILES, pooled)}
        return block, per_point, dict(zip(self.families, subset_rho[self.pools:]))


class Reference:
    """The high-D side of every metric, computed once and reused for each embedding.

    Parameters
    ----------
    X : array_like, shape (N, D) or (N, N)
        The data (N >= 4, finite); with ``metric="precomputed"`` a square distance matrix,
        symmetric with a zero diagonal up to rounding.
    truth : array_like, shape (N, D), optional
        Noise-free coordinates (same metric as X): adds the ``__vs_truth`` block.
    labels : array_like, shape (N,), optional
        Cluster labels: integers (negative = unlabelled) or any hashable values (strings,
        ...; every point labelled, ``tight_cluster`` then gives the chosen label's index among
        the sorted distinct labels). Adds the tightest-cluster block, the cluster chosen in
        truth space (in X when no truth is given).
    outlier_idx : array_like of int, optional
        Indices of outlier points: adds the outlier block.
    outlier_dir : array_like of int, optional
        Outlier direction (group) per entry of ``outlier_idx``.
    population : array_like of {0, 1}, shape (N,), optional
        0 majority / 1 minority: adds the population block.
    metric : str, default "euclidean"
        A scipy ``pdist`` metric name for X (and truth), or ``"precomputed"``.
    per_point : bool, default True
        Also compute the per-point band Shepard columns (``pp_shepard_*``).

    Raises
    ------
    ValueError
        Input of the wrong shape, complex or non-finite values, a NaN distance (e.g. cosine
        with an all-zero row), inconsistent N, bad labels or indices.
    MemoryError
        Before anything is allocated, when the estimated peak memory (about 15 bytes per pair
        and reference space, 13 more while scoring) exceeds the memory available.

    Notes
    -----
    The sorts, the Shepard and stress passes and the neighbour row blocks run on
    ``$DRFIDELITY_METRIC_THREADS`` threads (default: the usable cores); every value is the
    same, to the bit, for any number of threads.

    Distances are exact on all N(N - 1)/2 pairs. Definitions of every column:
    ``docs/metrics.md``. Band Shepard rho is Spearman's rho over the pairs inside a
    data-distance percentile (Shepard 1962); stress is Kruskal's (1964) with the least-squares
    scale; trustworthiness and continuity follow Venna & Kaski (2001).

    Examples
    --------
    >>> import numpy as np
    >>> from drfidelity.metrics import Reference
    >>> X = np.random.default_rng(0).normal(size=(100, 10))
    >>> reference = Reference(X)
    >>> [round(reference.score(X[:, :d])["full_shepard"], 4) for d in (2, 5)]
    [0.394, 0.6851]
    """

    def __init__(self, X, *, truth=None, labels=None, outlier_idx=None, outlier_dir=None,
                 population=None, metric: str = "euclidean", per_point: bool = True):
        self._build(reference_inputs(X, truth=truth, labels=labels, outlier_idx=outlier_idx,
                                     outlier_dir=outlier_dir, population=population,
                                     metric=metric), per_point)

    @classmethod
    def _from_inputs(cls, inputs: ReferenceInputs, per_point: bool) -> "Reference":
        """The reference of inputs already checked by :mod:`.inputs`."""
        reference = cls.__new__(cls)
        reference._build(inputs, per_point)
        return reference

    def _build(self, inputs: ReferenceInputs, per_point: bool) -> None:
        X, truth, metric = inputs.X, inputs.truth, inputs.metric
        n = self.n = inputs.n
        d_amb = condensed_distances(X, metric)
        self._ambient = _BandReference.build("vs_ambient", d_amb, n, per_point)
        self._truth = None
        d_truth = d_amb
        if inputs.shared_truth:  # noise-free data: share the ambient work
            self._truth = replace(self._ambient, tag="vs_truth")
        elif truth is not None:
            d_truth = condensed_distances(truth, metric, "truth")
            self._truth = _BandReference.build("vs_truth", d_truth, n, per_point)
        self._kmax = min(max(K_VALUES), n - 1)
        constant = not np.any(d_amb > 0)
        if constant:
            warnings.warn("every point of X is at the same place (all distances are 0): "
                          "Spearman rho, stress, trustworthiness, continuity and recall are "
                          "undefined (NaN)", RuntimeWarning, stacklevel=3)
        self._neighbours = Neighbourhoods(_rows_of(d_amb, n), n, self._kmax, constant=constant,
                                          block_map=threaded_map)

        self._tight: TightCluster | None = None
        if inputs.labels is not None and np.any(inputs.labels >= 0):
            self._tight = select_tightest(d_truth, n, inputs.labels)

        self._outliers: OutlierSet | None = None
        self._outlier_high: OutlierSpace | None = None
        if inputs.outlier_idx is not None:
            self._outliers = outlier_set(n, inputs.outlier_idx, inputs.outlier_dir)
            self._ambient.add_families({OUTLIER_RHO: self._outliers.weights})
            coords = None if metric == "precomputed" else X
            self._outlier_high = outlier_space(self._outliers, _rows_of(d_amb, n), d_amb, n,
                                               coords)

        if inputs.population is not None:
            self._ambient.add_families(population_weights(inputs.population))

    def score(self, Y) -> dict[str, float]:
        """Every metric column for the map Y.

        Parameters
        ----------
        Y : array_like, shape (N, d)
            The embedding (Euclidean, usually d = 2, any d >= 1), finite, one row per point
            of X.

        Returns
        -------
        dict of str to float
            Column -> value, in the column order of the result tables. NaN where a metric is
            undefined (e.g. every column of a constant map, with a RuntimeWarning).
        """
        Y = check_map_points(Y, self.n)
        n = self.n
        # consumed by the sort; recomputed below, after the orders
        low = RankedDistances(condensed_distances(Y, "euclidean", "Y"), consume=True)
        constant = not low.largest > 0
        if constant:
            warnings.warn("the embedding puts every point at the same place (all 2-D distances "
                          "are 0): Spearman rho, stress, trustworthiness, continuity and recall "
                          "are undefined (NaN)",
                          RuntimeWarning, stacklevel=2)
        median_2d = low.median()
        shared = self._truth is not None and self._truth.ranked is self._ambient.ranked
        ambient_rhos = self._ambient.rhos(low)
        truth_rhos = None
        if self._truth is not None and not shared:
            truth_rhos = self._truth.rhos(low)
        del low
        d_2d = condensed_distances(Y, "euclidean", "Y")
        band, per_point, families = self._ambient.columns(ambient_rhos, d_2d)
        row = {**band, **per_point}
        row["full_shepard"] = band["shepard_p100__vs_ambient"]
        row["full_stress"] = band["stress_p100__vs_ambient"]
        row["full_stress_fidelity"] = band["stress_fidelity_p100__vs_ambient"]
        if shared:  # noise-free data: the truth columns are the ambient ones
            row.update({key.replace("__vs_ambient", "__vs_truth"): value
                        for key, value in {**band, **per_point}.items()})
        elif truth_rhos is not None:
            truth_band, truth_per_point, _ = self._truth.columns(truth_rhos, d_2d)
            row.update(truth_band)
            row.update(truth_per_point)
        if self._tight is not None:
            row.update(cluster_scale(self._tight, d_2d, median_2d))
        rows_2d = _rows_of(d_2d, n)
        if self._outliers is not None:
            low_outliers = outlier_space(self._outliers, rows_2d, d_2d, n, Y)
            row.update(outlier_metrics(self._outliers, self._outlier_high, low_outliers,
                                       families[OUTLIER_RHO]))
        row.update({key: value for key, value in families.items() if key != OUTLIER_RHO})
        low_neighbours = Neighbourhoods(rows_2d, n, self._kmax, constant=constant,
                                        block_map=threaded_map)
        row.update(neighbour_scores(self._neighbours, low_neighbours))
        return row


def score(X, Y, *, truth=None, labels=None, outlier_idx=None, outlier_dir=None, population=None,
          metric: str = "euclidean", per_point: bool = True) -> dict[str, float]:
    """All metric columns of one embedding Y of X.

    Parameters
    ----------
    X, truth, labels, outlier_idx, outlier_dir, population, metric, per_point
        As for :class:`Reference`.
    Y : array_like, shape (N, d)
        The embedding (usually d = 2, any d >= 1).

    Returns
    -------
    dict of str to float
        Column -> value (see :meth:`Reference.score`). To score several maps of one dataset,
        build one :class:`Reference` and call its ``score`` per map.

    Examples
    --------
    >>> import numpy as np
    >>> from drfidelity.metrics import score
    >>> X = np.random.default_rng(0).normal(size=(100, 10))
    >>> row = score(X, X[:, :2])
    >>> len(row), round(row["full_shepard"], 4), round(row["trust_k15"], 4)
    (45, 0.394, 0.6834)
    """
    inputs, Y = score_inputs(X, Y, truth=truth, labels=labels, outlier_idx=outlier_idx,
                             outlier_dir=outlier_dir, population=population, metric=metric)
    return Reference._from_inputs(inputs, per_point).score(Y)
