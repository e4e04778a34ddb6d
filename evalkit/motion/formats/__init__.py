"""Motion file formats: one reader (and writer) per format behind one dispatcher.

:func:`load_motion` picks the reader of a file by its extension and, for ``.npz``/``.npy``, by
its content (:mod:`evalkit.motion.formats.dispatch`); :func:`iter_motion_files` expands files and
folders into the motion files they hold. The readers are :mod:`~evalkit.motion.formats.bvh`,
:mod:`~evalkit.motion.formats.amc` (ASF/AMC), :mod:`~evalkit.motion.formats.smpl` (SMPL-family
parameter files), :mod:`~evalkit.motion.formats.humanml3d` (HumanML3D joints and features, MDM
results) and :mod:`~evalkit.motion.formats.arrays` (joint-position arrays); ``.npz`` members are
read by :mod:`~evalkit.motion.formats.npz`, pickles by the restricted unpickler of
:mod:`~evalkit.motion.formats.safepickle`. Every reader checks the input limits of
:mod:`~evalkit.motion.formats.limits` before the work they bound.
"""

from evalkit.motion.formats.dispatch import (
    FOLDER_EXTENSIONS,
    LoadOptions,
    MOTION_EXTENSIONS,
    check_fps,
    clip_count,
    clip_source,
    file_digest,
    holds_motion,
    iter_motion_files,
    load_motion,
)

__all__ = [
    "FOLDER_EXTENSIONS",
    "LoadOptions",
    "MOTION_EXTENSIONS",
    "check_fps",
    "clip_count",
    "clip_source",
    "file_digest",
    "holds_motion",
    "iter_motion_files",
    "load_motion",
]
