"""Our tables held against published ones: against the previous release's
(:mod:`~drfidelity.crosscheck.comparison`) and one published release against the next
(:mod:`~drfidelity.crosscheck.release_diff`), on the same keys and tolerances."""
