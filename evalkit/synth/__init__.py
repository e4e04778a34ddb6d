"""Reference motion graphs: SMG (Kovar et al. 2002) and BPMG (body part motion graphs, thesis ch. 3).

Modules: :mod:`~evalkit.synth.distance` (Kovar point-cloud distance), :mod:`~evalkit.synth.graph`
(generic graph machinery), :mod:`~evalkit.synth.blend` (transition blending).
"""
