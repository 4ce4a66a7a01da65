"""The supplements: the previous release's other frozen configurations.

:mod:`.registry` says what each study runs (its inputs and method jobs), :mod:`.scores` how a
map becomes a row, :mod:`.tables` how rows become the previous release's tables and their
headline medians and curves. The stages ``supplement_embed`` and ``supplement_score`` are thin
commands over these.
"""
