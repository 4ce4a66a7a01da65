"""Running independent (method, seed) jobs side by side: a local process pool
(:mod:`.runner`) or the workers of a Dask cluster (:mod:`.cluster`)."""
