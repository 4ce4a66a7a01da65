"""What the whole package stands on, and what every pipeline stage runs.

The numeric settings applied before numpy loads (:mod:`.runtime`), input checks
(:mod:`.validation`), fingerprints and atomic writes (:mod:`.storage`), the one-line error
messages of the command line (:mod:`.console`), ``params.yaml`` (:mod:`.params`), the names
and settings of the methods and datasets (:mod:`.registry`), the paths of the pipeline's files
with the loaders that refuse stale ones (:mod:`.layout`), and deterministic writers
(:mod:`.files`). Nothing here imports the methods, datasets, metrics or report, so every DVC
stage depends on this folder and an edit elsewhere reruns only the stages that read it.
"""
