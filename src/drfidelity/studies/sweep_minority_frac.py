"""The minority-fraction sweep: the populations dataset at data.snr with the minority's share
shrinking (0.05 is the main input, computed again so the study never depends on the main
maps). Beside the curves, a gallery of the maps at each fraction."""

from __future__ import annotations

from drfidelity.core.layout import study_data_dir, study_embeddings_dir
from drfidelity.core.params import Params
from drfidelity.studies._sweep import Sweep, sweep_spec

SWEEP = Sweep(
    name="sweep_minority_frac", knob="minority_frac", knob_words="minority fraction",
    dataset="populations", cache="populations_sweep", prefix="mf", noised=True,
    stem="sweep_populations",
    metrics=("full_shepard", "shepard_p5__vs_ambient", "minority_shepard__vs_ambient",
             "within_majority_shepard__vs_ambient", "within_minority_shepard__vs_ambient",
             "cross_population_shepard__vs_ambient"),
    plotted=(("full_shepard", "full ρ"), ("minority_shepard__vs_ambient", "minority-pair ρ"),
             ("within_majority_shepard__vs_ambient", "within-majority ρ"),
             ("within_minority_shepard__vs_ambient", "within-minority ρ"),
             ("cross_population_shepard__vs_ambient", "cross-population ρ")),
    reported=("minority_shepard__vs_ambient", "minority-pair ρ"),
    title="minority-fraction sweep",
    blurb="The populations dataset (SNR as in the main benchmark) with the minority's share "
          "shrinking.",
    figure_key="populations_sweep_curve",
    figure_caption="**Minority-fraction sweep**: full, minority-pair, within-majority, "
                   "within-minority and cross-population ρ against the minority fraction (log "
                   "axis). Read: a method that keeps the minority holds its curves flat as the "
                   "fraction shrinks.",
    axis_label="minority fraction (log scale)",
)


def galleries(params: Params, root, drawn, kit) -> None:
    """One gallery of the lowest-seed maps per fraction, largest first."""
    fractions = []
    inputs = study_data_dir(root, SWEEP.name)
    for folder in sorted(inputs.iterdir() if inputs.is_dir() else [],
                         key=lambda p: -float(p.name)):
        data = kit.arrays(folder, "labels", "population")
        found = kit.lowest_seed_maps(study_embeddings_dir(root, SWEEP.name), folder.name)
        if data is None or found is None:
            continue
        maps, seeds, skipped = found
        fractions.append(float(folder.name))
        drawn.add(f"population_gallery_mf{float(folder.name):g}",
                  kit.draw.population_gallery(data, maps, seeds, skipped),
                  SWEEP.heading(params, kit, float(folder.name)), skipped=skipped)
    if fractions:
        drawn.facts["population_galleries"] = {"fractions": fractions}


def gallery_blocks(s, kit) -> list:
    blocks = []
    for frac in s.fact("population_galleries").get("fractions", []):
        blocks += s.figure(f"population_gallery_mf{frac:g}", (
            f"**Populations at minority fraction {frac:g}** (lowest seed; majority = dots, "
            "minority = black-edged triangles, colour = cluster)."
            + kit.missing(s, f"population_gallery_mf{frac:g}")))
    return blocks


SPEC = sweep_spec(SWEEP, value_range=(0, 0.5, True),
                  reads=("data", "dataset_params.populations"), report_order=41,
                  more_figures=galleries, more_section=gallery_blocks)
