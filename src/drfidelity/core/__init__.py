"""What the whole package stands on, and what every pipeline stage runs.

The numeric settings applied before numpy loads (:mod:`.runtime`), input checks
(:mod:`.validation`), fingerprints and atomic writes (:mod:`.storage`), the one-line error
messages of the command line (:mod:`.console`), ``params.yaml`` (:mod:`.params`), the
:class:`~.method.Method` class with its checks and the rule from a method's name to its
modules (:mod:`.method`), the paths of the pipeline's files with the loaders that refuse stale
ones (:mod:`.layout`), and deterministic writers (:mod:`.files`). Nothing here imports the
methods, datasets, metrics or report, and no method's entry or list of names lives here
(:mod:`drfidelity.registry` holds them), so every DVC stage depends on this folder, and adding
or editing a method, dataset or study reruns only the stages that read it.
"""
