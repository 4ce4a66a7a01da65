"""Population Shepard rho for an imbalanced two-population dataset.

population[i] is 0 (majority A) or 1 (minority B). Pairs are split by their endpoints: both A,
both B, or one of each (cross); "minority" = every pair touching B (both B or cross).
"""

from __future__ import annotations

import numpy as np

from .distances import pair_class

# key -> which values of population[i] + population[j] the pair family contains
FAMILIES = {
    "within_majority_shepard__vs_ambient": (0,),
    "within_minority_shepard__vs_ambient": (2,),
    "cross_population_shepard__vs_ambient": (1,),
    "minority_shepard__vs_ambient": (1, 2),
}


def population_weights(population: np.ndarray) -> dict[str, np.ndarray]:
    """0/1 pair weights of each family, keyed by column name (computed once per dataset)."""
    classes = pair_class(population)
    return {key: np.isin(classes, values).view(np.uint8) for key, values in FAMILIES.items()}

