"""What the report is written from: :class:`Inputs`, the results tables, the figures' facts,
the studies' tables and the params of one run (read by the ``report`` stage)."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pandas as pd

from drfidelity.core.layout import RELEASES
from drfidelity.core.params import Params
from drfidelity.report.movement import Rule
from drfidelity.report.studies import StudyResults
from drfidelity.report.tables import RankingTable, ranking_table


@dataclass
class Inputs:
    params: Params
    aggregated: pd.DataFrame
    skipped: pd.DataFrame
    facts: dict  # dataset -> figures/{dataset}/facts.json (absent: figures not built)
    studies: StudyResults = field(default_factory=StudyResults)
    #: per two consecutive imported releases: (older, newer, the release_diff stage's tables
    #: or None when they are absent)
    releases: list[tuple[str, str, dict | None]] = field(default_factory=list)
    #: the previous project's release this configuration rebuilds (compared with); None for
    #: the living configuration, which rebuilds none
    published: str | None = RELEASES[0]
    #: ``results/metrics_per_run.csv`` (None: no rank-stability readout)
    per_run: pd.DataFrame | None = None
    #: the published release's ``metrics_aggregated.csv`` (None: its claims are not checked)
    published_aggregated: pd.DataFrame | None = None
    #: from a release's root, the checkout's root (relative): its report tells what moved
    #: between the releases, this one points there; None at the checkout's root
    checkout: str | None = None
    #: ``results/noise_ceiling.csv``: per dataset, its noise-free geometry scored as a map
    #: (None: not built)
    ceiling: pd.DataFrame | None = None
    #: for the living configuration, the checkout's frozen runs and what decides their
    #: ranking, which its report tells what moved from (None: no such section)
    frozen: tuple[pd.DataFrame, Rule] | None = None

    def table(self, dataset: str) -> RankingTable:
        return ranking_table(self.aggregated, dataset, self.params.ranking)

    def median(self, dataset: str, method: str, metric: str) -> float:
        a = self.aggregated
        rows = a[(a.dataset == dataset) & (a.method == method) & (a.metric == metric)]
        return float(rows["median"].iloc[0]) if len(rows) else math.nan

    def ceiling_of(self, dataset: str) -> dict[str, float]:
        """The noise ceiling's columns of ``dataset`` ({} where it has no truth or none was
        built)."""
        if self.ceiling is None:
            return {}
        rows = self.ceiling[self.ceiling.dataset == dataset]
        return {} if rows.empty else {k: float(v) for k, v in rows.iloc[0].items()
                                      if k not in ("dataset", "snr") and pd.notna(v)}

    def skipped_on(self, dataset: str) -> list[tuple[str, str]]:
        rows = self.skipped[self.skipped.dataset == dataset]
        return [(r.method, r.reason) for r in rows.itertuples()]

