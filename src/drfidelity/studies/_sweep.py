"""What the two sweeps share: one main dataset generated again at each value of one of its
knobs, scored with the canonical columns, a curve of medians over the knob.

:func:`sweep_spec` makes a sweep's :class:`~drfidelity.studies.spec.StudySpec` from what
differs between them; each sweep is still its own module and registry entry.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Callable

from drfidelity.core.params import Params
from drfidelity.studies.spec import Config, StudySpec, TablePair, method_jobs

#: (N, D, data seed) of the previous release's sweeps, whose cache tags name the value only
#: ("of1.5"); at any other size the tag names the size too, so no map of another input is met.
PREVIOUS_SWEEP_INPUT = (1000, 768, 0)


@dataclass(frozen=True)
class Sweep:
    """One sweep: ``knob`` of main dataset ``dataset`` over ``studies.<name>.values``,
    noised at data.snr or clean; toorPIA's maps in ``external_maps/<cache>`` under tags
    ``<prefix><value>``. ``plotted`` are the curve figure's (metric, label) panels,
    ``reported`` the (metric, label) whose leader the report quotes at both ends."""

    name: str
    knob: str
    knob_words: str
    dataset: str
    cache: str
    prefix: str
    noised: bool
    stem: str
    metrics: tuple[str, ...]
    plotted: tuple[tuple[str, str], ...]
    reported: tuple[str, str]
    title: str
    blurb: str
    figure_key: str
    figure_caption: str
    axis_label: str

    def heading(self, params: Params, kit, value: float | None = None) -> str:
        """The heading of the sweep's figures: its dataset, its noise (clean or data.snr)."""
        title = kit.dataset_title(self.dataset) + ("" if value is None
                                                   else f", {self.knob} = {value:g}")
        return kit.main_heading(params, title, params.snr if self.noised else math.inf)


def sweep_spec(sweep: Sweep, *, value_range: tuple[float, float | None, bool], reads,
               report_order: int, tie_sensitive: bool = False, paper_figures=(),
               glossary: Callable | None = None, more_figures: Callable | None = None,
               more_section: Callable | None = None) -> StudySpec:
    """The spec of ``sweep``; ``more_figures(params, root, drawn, kit)`` and
    ``more_section(s, kit)`` add what one sweep draws beyond the curves."""
    pair = TablePair(sweep.stem, sweep.metrics,
                     compare_keys=(sweep.knob, "method", "seed"),
                     compare_group=("method", sweep.knob, "metric"), tie_sensitive=tie_sensitive,
                     headline=((sweep.knob,), (sweep.reported[0],)),
                     curve=(sweep.knob, ("method",), ("full_shepard", sweep.reported[0])),
                     release_maps=(f"{sweep.cache}/toorpia/embedding",))

    def inputs(params: Params, settings: dict) -> list[Config]:
        snr = params.snr if sweep.noised else math.inf
        result = []
        for value in settings["values"]:
            knobs = {**params.dataset_params.get(sweep.dataset, {}), sweep.knob: value}

            def build(data, knobs=knobs) -> dict:
                return data.generate(sweep.dataset, n=params.n, d=params.d,
                                     data_seed=params.data_seed, snr=snr, params=knobs)

            key = f"{value:g}"
            size = (params.n, params.d, params.data_seed)
            tag = f"{sweep.prefix}{key}" if size == PREVIOUS_SWEEP_INPUT else \
                "n{}_d{}_seed{}_".format(*size) + f"{sweep.prefix}{key}"
            result.append(Config(key, {sweep.knob: value}, build, (sweep.cache, tag),
                                 method_jobs(params, key)))
        return result

    def readouts(config: Config, arrays: dict, runs, kit) -> list[dict]:
        high_d = kit.canonical_reference(arrays)
        return [high_d.score(Y) for _, Y in runs]

    def tabulate(params: Params, per_run, kit) -> dict:
        return {pair.per_run: per_run,
                pair.aggregated: kit.aggregate_grouped(per_run, ["method", sweep.knob],
                                                       list(sweep.metrics), params)}

    def figures(params: Params, root, drawn, kit) -> None:
        aggregated = kit.table(root, pair.aggregated)
        if aggregated is not None:
            new = kit.new_methods(aggregated, kit.table(root, pair.per_run))
            drawn.add(sweep.figure_key,
                      kit.draw.sweep_curves(aggregated, sweep.knob, sweep.plotted,
                                            sweep.axis_label, new),
                      sweep.heading(params, kit), new_methods=new)
        if more_figures is not None:
            more_figures(params, root, drawn, kit)

    def section(s, kit) -> list:
        title = f"Supplement — {sweep.title}"
        if pair.aggregated not in s.tables:
            return kit.not_built(title, stage_words, pair.aggregated)
        aggregated = s.tables[pair.aggregated]
        blocks = [kit.Heading(2, title), kit.Quote(sweep.blurb)]
        blocks += s.figure(sweep.figure_key,
                           sweep.figure_caption + kit.new_note(s, sweep.figure_key))
        if more_section is not None:
            blocks += more_section(s, kit)
        values = sorted(set(aggregated[sweep.knob]))
        metric, label = sweep.reported
        parts = []
        for v in (values[0], values[-1]):
            m, x = kit.leader(aggregated, metric, **{sweep.knob: v})
            parts.append(f"{sweep.knob_words} {v:g}: {m} ({kit.fixed(x)})")
        blocks.append(kit.Para(f"Highest {label}: " + "; ".join(parts) + "."))
        return blocks

    stage_words = f"the {sweep.title.removesuffix(' sweep')} sweep stage"
    return StudySpec(
        name=sweep.name, schema={"values": [float]}, ranges={"values": value_range},
        inputs=inputs, readouts=readouts, tabulate=tabulate, tables=(pair,), reads=reads,
        maps=sweep.cache, stage_words=stage_words, report_order=report_order,
        report_tables=(pair.aggregated,), figures=figures, section=section,
        new_methods=frozenset({"DREAMS"}), paper_figures=paper_figures, glossary=glossary)
