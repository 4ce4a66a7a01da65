"""toorPIA: a remote service's maps, read from their cache (wrapper: ``methods/toorpia.py``)."""

from drfidelity.core.method import NON_NEGATIVE, POSITIVE, Method, at_least, choice

#: its cache modes: ``embedding`` (refillable through the API), ``fit`` (legacy maps)
MODES = ("embedding", "fit")

# per-call deadline, sessions, pause step, the whole wait for one dataset's map
SPEC = Method("toorPIA", stochastic=False,
              defaults={"mode": "embedding", "deadline_s": 120.0, "max_attempts": 4,
                        "backoff_s": 3.0, "wait_budget_s": 300.0},
              checks={"mode": choice(*MODES), "deadline_s": POSITIVE,
                      "max_attempts": at_least(1), "backoff_s": NON_NEGATIVE,
                      "wait_budget_s": POSITIVE}, local_only=True)
