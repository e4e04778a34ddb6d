"""The motion core: a small typed data model and the operations around it.

Conventions used everywhere in evalkit:

* Lengths are in **metres**, time in **seconds**, frame rates in frames per second.
* The world is **Y-up**, right-handed; the ground plane is ``y = const``.
* Rotations are **unit quaternions in scalar-last order** ``(x, y, z, w)`` (scipy's
  convention), stored per joint as the rotation of the joint's frame relative to its parent.
"""

from evalkit.motion.model import Motion, Skeleton
from evalkit.motion.formats import LoadOptions, load_motion
from evalkit.motion.formats.bvh import read_bvh, write_bvh, parse_bvh
from evalkit.motion.formats.amc import read_asf, read_amc, read_asf_amc
from evalkit.motion.fk import forward_kinematics, global_positions
from evalkit.motion.roles import ROLE_NAMES, find_roles, load_role_map
from evalkit.motion.ops import low_pass, resample, mirror, skeleton_height

__all__ = [
    "Motion",
    "Skeleton",
    "LoadOptions",
    "load_motion",
    "read_bvh",
    "write_bvh",
    "parse_bvh",
    "read_asf",
    "read_amc",
    "read_asf_amc",
    "forward_kinematics",
    "global_positions",
    "ROLE_NAMES",
    "find_roles",
    "load_role_map",
    "resample",
    "low_pass",
    "mirror",
    "skeleton_height",
]
