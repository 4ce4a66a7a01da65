"""The three captions a study's ``figures`` still has the ``study_figures`` stage write into
``figures/studies/facts.json`` (``caption``), read back by the report's ``drawn_caption``:
the trajectory gallery's, the sensitivity grid's and the noise-dims maps grid's.

They are prose, and belong to the report (:mod:`drfidelity.report.captions`), but a study
module names them (``kit.draw.trajectory_caption``) and an edit of a study module reruns its
maps: they move with the next change of the study modules (issue 41, items 2 and 3), which
also drops the ``caption`` entries from that ``facts.json``. Until then they live here, apart
from the painters, and :mod:`drfidelity.figures.studies` hands them on as ``kit.draw``.
"""

from __future__ import annotations

from drfidelity.figures.settings import JUMP_FACTOR, METRIC_LOOKS

#: how a caption names a line style and a marker
LOOK_WORDS = {"-": "solid", "--": "dashed", ":": "dotted", "o": "circles", "s": "squares",
              "^": "triangles"}


def _headed(text: str, facts: dict) -> str:
    heading = facts.get("heading")
    return f"{text} ({heading}.)" if heading else text


def trajectory_caption(facts: dict) -> str:
    """The trajectory gallery's caption: what the lines, colours and markers are."""
    return _headed(
        "**Trajectory gallery** (each method's lowest-seed map). Each series has its own colour "
        "and is joined step by step in time order, from its start (circle) to its end "
        f"(square); a step the map stretches beyond {JUMP_FACTOR:g}× the series' median step "
        "is drawn thin and dashed: there the map tears the walk apart. Read: a star of "
        "separate rays keeps the global arrangement; dashed jumps are tears; a smooth curve "
        "where the data is jagged hides the step structure.", facts)


def hyperparam_caption(facts: dict, metrics) -> str:
    """The sensitivity grid's caption: which of the (metric, label) panels ``metrics`` has
    which colour, line style and marker."""
    lines = ", ".join(f"{label} ({LOOK_WORDS[ls]}, {LOOK_WORDS[marker]})"
                      for (_, label), (_, ls, marker) in zip(metrics, METRIC_LOOKS))
    return _headed(
        "**Sensitivity** (rows = datasets, columns = methods, frames in the method's colour): "
        f"{lines} against the knob value on a log axis, bands = bootstrap CIs; the grey line "
        "marks the main benchmark's setting. Read: a flat curve means the main table's value "
        "does not depend on the knob.", facts)


def dims_grid_caption(facts: dict) -> str:
    """The noise-dims maps grid's caption: its columns are the table's dimensions."""
    dims = ", ".join(str(d) for d in facts.get("dims", []))
    return _headed(
        f"**Maps across D** (rows = methods, columns = D = {dims}, the dimensions of the table "
        "beside it; lowest seed, colour = label). Read: where the three colours merge, the "
        "map has lost the signal.", facts)

