"""One record per benchmark dataset: what the stages and the report need to know about it.

Each dataset module defines its :class:`DatasetSpec` beside its generator and
:mod:`.registry` collects them, so no stage or report module tests a dataset's name: adding
a dataset is its module, its line in the registry and its ``params.yaml`` entry. A field that
selects a drawing or a readout holds a kind that the module using it interprets
(``drfidelity.figures.panels.GALLERIES``, ``drfidelity.metrics.readouts.READOUTS``), so this
package imports neither the report nor the metrics.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from ._common import Dataset

#: The knobs a generator runs with (its defaults overridden by ``dataset_params``).
Knobs = Mapping[str, Any]


@dataclass(frozen=True)
class ScoredColumn:
    """A ranking column beyond full and near ρ that earns points on one dataset.

    ``metric`` is the aggregated metric it ranks; ``points`` heads its points column and
    ``header`` (in header group ``group``) its value column, appended after the common ones;
    ``latex_points`` and ``latex_header`` are those two headers in the paper's tables.
    """

    metric: str
    points: str
    header: str
    group: str
    latex_points: str
    latex_header: str


@dataclass(frozen=True)
class DatasetSpec:
    """A benchmark dataset: its generator and everything the pipeline says or draws about it.

    Parameters
    ----------
    name : str
        Its key in ``params.yaml`` (``datasets``, ``dataset_params``) and in output paths.
    generator : callable
        ``generator(n, d, seed, **knobs) -> Dataset``; its keyword-only parameters are the
        knobs ``dataset_params`` may set.
    title : str
        Heading of its REPORT section and title of its paper table.
    blurb : callable, optional
        ``blurb(knobs) -> str``: the sentence under the heading, its numbers read from the
        knobs the data was generated with; None lets the title stand in (the probes, which
        REPORT presents in their study sections).
    extras : tuple of str, optional
        Keys of ``Dataset.extras`` that the stored input keeps beside X, X_truth and labels.
    noised : bool, optional
        False for a probe used as generated, which accepts only ``snr = inf``.
    gallery : str, optional
        How the map gallery marks and colours the points: a key of
        ``drfidelity.figures.panels.GALLERIES``.
    scored : tuple of ScoredColumn, optional
        Ranking columns beyond full and near ρ.
    rankable : tuple of ScoredColumn, optional
        Columns a release's ranking rule may add after ``scored`` (params ``ranking``; the
        previous project's v1.4.0 added populations' minority-pair ρ).
    scatter : (str, str), optional
        ``(metric, axis label)`` of the score scatter's x axis; None keeps the near-band ρ.
    figure_stems : mapping of str to str, optional
        Figure key -> file stem where this dataset's figure keeps the previous release's name.
    shares : callable, optional
        ``shares(knobs)`` -> the percentage of the points in each population, which the
        paper table's title quotes.
    guide : tuple of str, optional
        Figure keys the reading guide shows from this dataset (the first dataset of the run
        listing a key is shown).
    paper_figures : tuple of str, optional
        Figure keys copied to ``paper/figures/{name}_{key}.png``, which ``paper/main.tex``
        includes.
    readouts : str, optional
        Per-run columns the score stage adds for this dataset: a key of
        ``drfidelity.metrics.readouts.READOUTS``.
    """

    name: str
    generator: Callable[..., Dataset]
    title: str
    blurb: Callable[[Knobs], str] | None = None
    extras: tuple[str, ...] = ()
    noised: bool = True
    gallery: str = "labels"
    scored: tuple[ScoredColumn, ...] = ()
    rankable: tuple[ScoredColumn, ...] = ()
    scatter: tuple[str, str] | None = None
    figure_stems: Mapping[str, str] = field(default_factory=dict)
    shares: Callable[[Knobs], tuple[float, ...]] | None = None
    guide: tuple[str, ...] = ()
    paper_figures: tuple[str, ...] = ()
    readouts: str | None = None
