"""drfidelity: how faithfully do 2-D embeddings keep the distances of high-dimensional data?

Subpackages: ``datasets`` (synthetic data with known geometry), ``methods`` (seeded DR
wrappers), ``metrics`` (exact all-pairs quality measures), ``pipeline`` (the DVC stages) and
``report`` (tables, REPORT.md, paper tables). Importing the package changes no process state;
the numeric settings of the benchmark are applied by :mod:`drfidelity.core.runtime`.
"""

__version__ = "0.1.0"
