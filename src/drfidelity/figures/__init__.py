"""The drawing wing: every figure of the benchmark, as PNG bytes and the facts it measured.

:mod:`.settings` holds what a figure draws that its caption also says (tolerances, colour
scales, file stems, the heading); it imports no plotting library, so the writing wing
(:mod:`drfidelity.report`) may read it. The rest draws: :mod:`.style` (one look, byte-stable
PNGs), :mod:`.analysis` (what one dataset's figures are computed from), :mod:`.panels` (panel
grids and map galleries), :mod:`.dataset` (a dataset's nine figures), :mod:`.studies` (the
studies' and the main tables' figures) and :mod:`.scale` (the scale study's figure).

No module here imports the report: the captions are written there, from each figure stage's
``facts.json``, so editing a caption reruns the report stage alone.
"""
