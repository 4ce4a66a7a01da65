"""PHATE (phate 2.0.0, with graphtools and tasklogger) (wrapper: ``methods/phate.py``);
registered for the living benchmark (issue 42), run by neither frozen release. Defaults: the
library's documented ones."""

from typing import Any

from drfidelity.core.method import POSITIVE, Method, at_least, bounded


def clamp_knn(knn: int, n: int) -> int:
    """min(knn, max(1, N-2)): PHATE's graph (graphtools) lowers a larger k to N-2 itself,
    with a warning."""
    at_least(1)("knn", knn)
    return min(knn, max(1, n - 2))


def diffusion_time(name: str, value: Any) -> Any:
    """PHATE's diffusion time ``t``: ``"auto"`` (chosen by the knee of the von Neumann
    entropy) or an integer >= 1."""
    return value if value == "auto" else at_least(1)(name, value)


#: seconds: one map at N = 1000, D = 768 in a fresh process, imports included, measured on
#: 2 cores beside another run (5.5 s), not yet by benchmarks/bench_methods.py
SPEC = Method("PHATE", stochastic=True,
              defaults={"knn": 5, "decay": 40, "t": "auto", "gamma": 1},
              checks={"knn": at_least(1), "decay": POSITIVE, "t": diffusion_time,
                      "gamma": bounded(low=-1.0, high=1.0)},
              clamps={"knn": clamp_knn},
              not_operable="PHATE's transform of new data is unsupported by its authors "
                           "(it warns: fit PHATE to the new data instead)", seconds=6)
