"""Running the studies of :mod:`drfidelity.studies`: their inputs and maps (:mod:`.embedding`),
their tables (:mod:`.scoring`), their DVC metrics and plots (:mod:`.summaries`), and the
items ``dvc.yaml`` loops over (:mod:`.wiring`). The stages ``supplement_embed``,
``supplement_score`` and ``supplement_figures`` are thin commands over these; no module here
names a study.
"""
