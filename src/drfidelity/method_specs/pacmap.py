"""PaCMAP (pacmap 0.9.1) (wrapper: ``methods/pacmap.py``); registered for the living benchmark
(issue 42), run by neither frozen release. Defaults: the library's documented ones."""

from drfidelity.core.method import NON_NEGATIVE, Method, at_least, clamp_neighbours

#: seconds: one map at N = 1000, D = 768 in a fresh process, imports included, measured on
#: 2 cores beside another run (1.6 s), not yet by benchmarks/bench_methods.py
SPEC = Method("PaCMAP", stochastic=True,
              defaults={"n_neighbors": 10, "MN_ratio": 0.5, "FP_ratio": 2.0},
              checks={"n_neighbors": at_least(1), "MN_ratio": NON_NEGATIVE,
                      "FP_ratio": NON_NEGATIVE},
              clamps={"n_neighbors": clamp_neighbours}, seconds=2)
