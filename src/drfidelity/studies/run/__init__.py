"""Running the studies of :mod:`drfidelity.studies`: their inputs (:mod:`.inputs`), their maps
(:mod:`.embedding`), their tables (:mod:`.scoring`), their DVC metrics and plots
(:mod:`.summaries`), and what ``dvc.yaml`` needs to know about them (:mod:`.wiring`). The stages
``study_inputs``, ``study_embed``, ``study_score`` and ``study_figures`` are
thin commands over these; no module here names a study.
"""
