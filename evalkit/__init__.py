"""evalkit: tells how natural generated character motion is.

Packages: :mod:`evalkit.motion` (data model, I/O, kinematics) is the core that every other
part builds on.
"""

from evalkit.errors import EvalkitError

__version__ = "0.1.0"
__all__ = ["EvalkitError", "__version__"]
