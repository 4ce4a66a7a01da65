"""The scale study: wall time and peak memory of every method and the metric engine against N.

:mod:`.study` runs the measurements (each in a fresh interpreter); this module holds the names
and rules that the report quotes too, so drawing the study's figure loads none of its code.
"""

#: the subject name of the metric engine's rows (the other subjects are method names)
ENGINE = "metric engine"
#: points of the warm-up call (compiles numba kernels, loads lazy imports)
WARMUP_N = 200
POLL_S = 0.2
#: a call shorter than TWICE_BELOW_S runs (at least) twice and the faster counts: a one-off
#: cost that the small warm-up does not trigger must not pass for growth with N (docs/scale.md
#: has the case that set it); a call shorter than MIN_TIMED_S repeats until the calls add up to
#: it (at most MAX_REPEATS times), as timeit does: one millisecond call is mostly noise
TWICE_BELOW_S = 60.0
MIN_TIMED_S = 1.0
MAX_REPEATS = 50
#: working memory below this is within ru_maxrss's noise and is left out of the memory fit
MEMORY_FLOOR_MIB = 8.0
CONFIG_KEYS = ("dataset", "sizes", "d", "data_seed", "snr", "seed", "methods", "budget_s",
               "memory_gib")
#: the study's knobs, and its outputs under results/
CONFIG_FILE = "scale.yaml"
RUNS_FILE, EXPONENTS_FILE, MACHINE_FILE = ("scale_runs.csv", "scale_exponents.csv",
                                           "scale_machine.json")
COLUMNS = ("subject", "n", "d", "status", "wall_s", "cpu_s", "repeats", "first_s", "warmup_s",
           "reference_s", "score_s", "peak_rss_mib", "base_rss_mib", "note")
