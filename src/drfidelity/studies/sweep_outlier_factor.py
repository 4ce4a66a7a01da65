"""The outlier-factor sweep: the outliers dataset on clean data, its outliers displaced by a
growing factor of the bulk's radius of gyration. Its data hold exact ties (all outlier pairs
equally separated), so its neighbour-rank columns are compared with the published tables but
never held to the exact tolerance."""

from __future__ import annotations

from drfidelity.studies._sweep import Sweep, sweep_spec

SWEEP = Sweep(
    name="sweep_outlier_factor", knob="outlier_factor", knob_words="outlier factor",
    dataset="outliers", cache="outliers_sweep", prefix="of", noised=False,
    stem="sweep_outliers",
    metrics=("full_shepard", "shepard_p5__vs_ambient", "outlier_shepard__vs_ambient",
             "pair_angle_2d_max"),
    plotted=(("full_shepard", "full ρ"), ("outlier_shepard__vs_ambient", "outlier ρ")),
    reported=("outlier_shepard__vs_ambient", "outlier ρ"),
    title="outlier-factor sweep",
    blurb="The outliers dataset on clean data with the outliers displaced by a growing factor "
          "of the bulk's radius of gyration.",
    figure_key="sweep_outliers_curve",
    figure_caption="**Outlier-factor sweep**: full ρ (left) and outlier-pair ρ (right) against "
                   "the factor (log axis), bands = bootstrap CIs. Read: outlier ρ should rise "
                   "with the factor as the outliers become easier to see.",
    axis_label="outlier factor (× bulk radius of gyration, log scale)",
)



def glossary(params) -> tuple[str, ...]:
    """Both sweeps' knobs in one bullet (the report's glossary states them together)."""
    return ("**outlier factor**: the outliers' distance from the bulk's centre in units of the "
            "bulk's radius of gyration; **minority fraction**: the minority's share of the "
            "points.",)


SPEC = sweep_spec(SWEEP, value_range=(0, None, True), glossary=glossary,
                  reads=("data.n", "data.d", "data.seed", "dataset_params.outliers"),
                  report_order=40, tie_sensitive=True, paper_figures=(SWEEP.figure_key,))
