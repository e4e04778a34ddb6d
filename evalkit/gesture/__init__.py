"""Gesture analysis: wrist trajectories, phases (rest, preparation, stroke, hold, retraction),
strokes and apexes, stroke features (FMDistance, velocity range, maximum velocity) and GSI.

Main entry points::

    from evalkit.gesture import analyze_gestures, gesture_database
    g = analyze_gestures(load_motion("take.bvh"))
    g.apex_times, g.gsi, g.phrases
    db = gesture_database(["clips/"])      # list of GesturePhrase (start/end frames, apex, GSI)
"""

from evalkit.gesture.trajectory import NORMALISED_HEIGHT_M, HandTrajectories, hand_trajectories
from evalkit.gesture.phases import PHASES, PhaseConfig, PhraseSegment, Segmentation, Stroke, segment_gestures
from evalkit.gesture.strokes import (
    STROKE_FEATURES,
    default_gsi_scale,
    fit_gsi_scale,
    stroke_fm_distance,
    joint_kinetic_energy,
    stroke_features,
)
from evalkit.gesture.analysis import (
    GestureAnalysis,
    GesturePhrase,
    StrokeRecord,
    analyze_gestures,
    gesture_database,
    load_gesture_database,
    phrases_frame,
    save_gesture_database,
)

__all__ = [
    "NORMALISED_HEIGHT_M", "HandTrajectories", "hand_trajectories",
    "PHASES", "PhaseConfig", "PhraseSegment", "Segmentation", "Stroke", "segment_gestures",
    "STROKE_FEATURES", "default_gsi_scale", "fit_gsi_scale", "stroke_fm_distance", "joint_kinetic_energy", "stroke_features",
    "GestureAnalysis", "GesturePhrase", "StrokeRecord", "analyze_gestures", "gesture_database",
    "load_gesture_database", "phrases_frame", "save_gesture_database",
]
