"""Reference motion graphs: SMG (Kovar, Gleicher & Pighin 2002) and BPMG (body part motion
graphs with progressive transitions, Fernández-Baena's thesis ch. 3), transition measurements
and study stimuli.

Library entry points::

    from evalkit.synth import build_smg, build_bpmg, synthesize_transition, measure_transitions

    smg = build_smg(["walk.bvh", "run.bvh"], threshold=0.3)        # or a ClipSet
    bpmg = build_bpmg(smg.clipset, profile="sp4a", threshold=0.3)   # reuses the distances
    motion, manifest = synthesize_transition(bpmg, "walk", "run", request_time_s=1.0)
    tables = measure_transitions(smg.clipset, threshold=0.3)

Modules: :mod:`~evalkit.synth.distance` (Kovar point-cloud distance), :mod:`~evalkit.synth.graph`
(generic graph machinery, reusable for gesture graphs), :mod:`~evalkit.synth.blend` (blending),
:mod:`~evalkit.synth.clips` (loading, retargeting, grounding), :mod:`~evalkit.synth.clipset`
(cached distances), :mod:`~evalkit.synth.bodyparts` (chains, split profiles),
:mod:`~evalkit.synth.gait` (stance, skate), :mod:`~evalkit.synth.smg`, :mod:`~evalkit.synth.bpmg`,
:mod:`~evalkit.synth.transition` (plans, rendering, checks), :mod:`~evalkit.synth.manifest`
(stimuli), :mod:`~evalkit.synth.measure` (thesis measurements).
"""

from evalkit.synth.bpmg import BodyPartMotionGraphs, BPMGConfig, build_bpmg
from evalkit.synth.clips import bundled_locomotion, prepare_clips, retarget
from evalkit.synth.clipset import ClipSet
from evalkit.synth.manifest import synthesize_transition, write_stimulus
from evalkit.synth.smg import GraphConfig, MotionGraph, build_smg

__all__ = [
    "BPMGConfig",
    "BodyPartMotionGraphs",
    "ClipSet",
    "GraphConfig",
    "MotionGraph",
    "build_bpmg",
    "build_smg",
    "bundled_locomotion",
    "measure_transitions",
    "prepare_clips",
    "retarget",
    "synthesize_transition",
    "write_stimulus",
]


def __getattr__(name):  # measure pulls in matplotlib lazily
    if name == "measure_transitions":
        from evalkit.synth.measure import measure_transitions

        return measure_transitions
    raise AttributeError(name)
