"""Method wrappers run in processes of their own, under other thread settings or on another
gradient path: each takes seconds, so they sit beside the pipeline's tests, outside the
library's inner loop (``make test-unit``)."""

from __future__ import annotations

import os

import numpy as np

from drfidelity.methods.dreams import fit_dreams, reference_layout
from method_helpers import LIVING, dreams_data, run_fresh


def test_living_methods_ignore_the_thread_variables():
    """PaCMAP, TriMap and PHATE hold their calls to one thread (methods/_threads.py): a process
    whose thread variables allow two gives the bytes of one that allows one (PHATE's OpenBLAS
    products differed without it)."""
    body = """
        X = make_data(300)
        print(json.dumps({name: digest(run(name, X, 1)) for name in %r}))
    """ % LIVING
    variables = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
                 "NUMBA_NUM_THREADS")
    made = [run_fresh(body, env={**os.environ, **{v: threads for v in variables}})
            for threads in ("1", "2")]
    assert made[0] == made[1]


def test_dreams_at_lambda_zero_is_vanilla_opentsne_bit_for_bit_on_the_fft_path(monkeypatch):
    """The FFT gradient (used from N = 10,000) is exercised here by lowering the switch."""
    import openTSNE

    from drfidelity.methods import dreams

    X = dreams_data()
    monkeypatch.setattr(dreams, "FFT_FROM_N", 0)
    R = reference_layout(X)
    vanilla = openTSNE.TSNE(perplexity=30, n_jobs=1, random_state=0, initialization=R,
                            negative_gradient_method="fft").fit(X)
    assert np.array_equal(fit_dreams(X, 0, reg_lambda=0.0, perplexity=30), np.asarray(vanilla))
