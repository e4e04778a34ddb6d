"""Semantic joint roles (hips, head, left ankle, ...) found from joint names.

Recognised naming schemes: CMU (cgspeed BVH and ASF), Mixamo (``mixamorig:``), Reallusion CC
(``CC_Base_``), SMPL-style (``left_knee``), Bandai Namco (``joint_Root``, ``UpperLeg_L``) and
GENEA/Trinity (``b_l_forearm``, Mixamo-like). Any role can be overridden from a YAML file::

    roles:
      left_ankle: MyRig_L_Foot
      head: MyRig_Head

A skeleton whose roles cannot all be found raises :class:`RolesNotFoundError` listing what is
missing and how to map it.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Mapping

import yaml

from evalkit.errors import ConfigError, RolesNotFoundError, yaml_error
from evalkit.textfile import read_config_text
from evalkit.motion.model import Skeleton

SIDED = ("shoulder", "elbow", "wrist", "hip", "knee", "ankle", "toe")
ROLE_NAMES: tuple[str, ...] = ("hips", "spine", "neck", "head") + tuple(
    f"{side}_{part}" for side in ("left", "right") for part in SIDED
)

# Base-name patterns per role, in priority order (full regex match on the normalised base).
_PATTERNS: dict[str, list[str]] = {
    "hips": [r"hips", r"hip", r"pelvis", r"root"],
    "spine": [r"spine", r"spine0?1?", r"spine\d*", r"lowerback", r"waist", r"abdomen", r"chest", r"torso", r"thorax"],
    "neck": [r"neck", r"neck0?1?", r"neck\d*", r"lowerneck", r"necktwist0?1", r"upperneck"],
    "head": [r"head"],
    "shoulder": [r"arm", r"upperarm", r"uparm", r"humerus", r"shoulder"],
    "elbow": [r"forearm", r"lowerarm", r"lowarm", r"elbow", r"radius"],
    "wrist": [r"wrist", r"hand"],
    "hip": [r"upleg", r"upperleg", r"thigh", r"femur", r"hip"],
    "knee": [r"leg", r"knee", r"calf", r"shin", r"lowerleg", r"lowleg", r"tibia"],
    "ankle": [r"ankle", r"foot"],
    "toe": [r"toebase", r"toes?", r"ball", r"toe0?", r"foot"],
}
_EXCLUDE = re.compile(r"twist|share|roll|end|nub|site|dummy|helper|ik|pole|target")
_ASF_WORDS = {
    "hipjoint", "femur", "tibia", "foot", "toes", "clavicle", "humerus", "radius", "wrist",
    "hand", "fingers", "thumb",
}
# Which sided role must be a descendant of which.
_CHAIN = {"elbow": "shoulder", "wrist": "elbow", "knee": "hip", "ankle": "knee", "toe": "ankle"}


def split_side(name: str) -> tuple[str | None, str]:
    """``"LeftUpLeg"`` -> ``("left", "upleg")``; ``"CC_Base_L_Calf"`` -> ``("left", "calf")``."""
    raw = name.split(":")[-1].split("|")[-1]
    low = raw.lower()
    for prefix in ("cc_base_", "b_", "joint_", "bip01_", "bip01 ", "def_", "mixamorig"):
        if low.startswith(prefix) and len(low) > len(prefix):
            low = low[len(prefix):]
            raw = raw[len(prefix):]
    side = None
    m = re.match(r"^(left|right)[_\s.-]?(.*)$", low)
    if m:
        side, low = m.group(1), m.group(2)
    else:
        m = re.match(r"^(.*?)[_\s.-]?(left|right)$", low)
        if m and m.group(1):
            side, low = m.group(2), m.group(1)
        else:
            m = re.match(r"^([lr])[_\s.-](.+)$", low) or re.match(r"^(.+?)[_\s.-]([lr])$", low)
            if m:
                if len(m.group(1)) == 1:
                    side, low = ("left" if m.group(1) == "l" else "right"), m.group(2)
                else:
                    side, low = ("left" if m.group(2) == "l" else "right"), m.group(1)
            elif re.match(r"^[LR][A-Z]", raw) or (low[:1] in "lr" and low[1:] in _ASF_WORDS):
                side, low = ("left" if low[0] == "l" else "right"), low[1:]
    base = re.sub(r"[_\s.-]", "", low)
    return side, base


def _depths(sk) -> list[int]:
    d = [0] * sk.n_joints
    for j in range(sk.n_joints):
        d[j] = 0 if sk.parents[j] < 0 else d[sk.parents[j]] + 1
    return d


def _is_ancestor(sk, a: int, b: int) -> bool:
    p = sk.parents[b]
    while p >= 0:
        if p == a:
            return True
        p = sk.parents[p]
    return False


@lru_cache(maxsize=256)
def _match_roles(names: tuple[str, ...], parents: tuple[int, ...],
                 given: tuple[tuple[str, int], ...]) -> tuple[tuple[str, int], ...]:
    """Roles found by name on top of ``given`` ones (cached: every metric of every clip of a rig
    asks for the same skeleton's roles)."""
    sk = _Tree(names, parents)
    depth = _depths(sk)
    parsed = [split_side(n) for n in names]
    roles: dict[str, int] = dict(given)

    def pick(patterns: list[str], side: str | None, allow_twist: bool = False, under: int | None = None,
             exclude: set[int] = frozenset()) -> int | None:
        for pat in patterns:
            rx = re.compile(pat)
            cands = [
                j for j, (s, base) in enumerate(parsed)
                if s == side and rx.fullmatch(base) and j not in exclude
                and (allow_twist or not _EXCLUDE.search(base))
                and (under is None or _is_ancestor(sk, under, j))
            ]
            if cands:
                return min(cands, key=lambda j: (depth[j], j))
        return None

    for role in ("hips", "spine", "neck", "head"):
        if role in roles:
            continue
        j = pick(_PATTERNS[role], None, allow_twist=(role == "neck"))
        if j is None and role == "hips":
            j = 0
        if j is not None:
            roles[role] = j
    if "head" not in roles and "neck" in roles:
        j = _head_from_neck_chain(sk, parsed, roles["neck"])
        if j is not None:
            roles["head"] = j

    for side in ("left", "right"):
        for part in SIDED:  # order matters: parents of the chain first
            key = f"{side}_{part}"
            if key in roles:
                continue
            under_role = _CHAIN.get(part)
            under = roles.get(f"{side}_{under_role}") if under_role else None
            used = set(roles.values())
            j = pick(_PATTERNS[part], side, under=under, exclude=used)
            if j is None and under is not None:
                j = pick(_PATTERNS[part], side, exclude=used)
            if j is not None:
                roles[key] = j
    return tuple(roles.items())


class _Tree:
    """Names and parents: all the role matcher needs of a skeleton (hashable inputs for caching)."""

    def __init__(self, names: tuple[str, ...], parents: tuple[int, ...]) -> None:
        self.names, self.parents, self.n_joints = names, parents, len(names)


def _head_from_neck_chain(sk: _Tree, parsed: list[tuple[str | None, str]], neck: int) -> int | None:
    """A head for rigs without a ``head`` joint: the last of a chain of neck joints below the
    neck role (Human3.6M-style ``Neck`` → ``Neck1``, where ``Neck1`` is the head), else the
    neck's end joint (``Site``, ``Neck_end``), else ``None``."""
    chain_end, j = None, neck
    while True:
        kids = [k for k in range(j + 1, sk.n_joints) if sk.parents[k] == j]
        nxt = [k for k in kids if parsed[k][0] is None and re.fullmatch(r"neck\d*", parsed[k][1])]
        if len(nxt) != 1:
            break
        chain_end = j = nxt[0]
    if chain_end is not None:
        return chain_end
    kids = [k for k in range(neck + 1, sk.n_joints) if sk.parents[k] == neck]
    ends = [k for k in kids if parsed[k][0] is None and re.fullmatch(r"(head)?(site|end|endsite|nub|top)\d*|neck\d*(end|site|nub)",
                                                                     parsed[k][1])]
    return ends[0] if len(kids) == 1 and ends else None


def find_roles(
    skeleton: Skeleton,
    overrides: Mapping[str, str] | None = None,
    required: Iterable[str] = ROLE_NAMES,
    strict: bool = True,
) -> dict[str, int]:
    """Map role names to joint indices.

    Args:
        skeleton: the skeleton.
        overrides: role -> joint name, applied before automatic matching (on top of the
            skeleton's own :attr:`~evalkit.motion.Skeleton.roles`).
        required: roles that must be found when ``strict``.
        strict: raise :class:`RolesNotFoundError` if a required role is missing.

    Returns:
        ``{role: joint index}`` for every role found.
    """
    names = skeleton.names
    given: dict[str, int] = {}
    # the skeleton's own role map (given when the clip was read), then the caller's overrides
    for role, joint in {**skeleton.roles, **(overrides or {})}.items():
        if role not in ROLE_NAMES:
            raise ConfigError(f"roles: unknown role {role!r}; roles are: {', '.join(ROLE_NAMES)}")
        if joint not in names:
            source = getattr(overrides, "source", None)
            raise ConfigError(
                f"{source + ': ' if source else ''}roles.{role}: no joint named {joint!r} in this skeleton; "
                f"joints are: {', '.join(names)}"
            )
        given[role] = names.index(joint)
    # SMPL / SMPL-H / SMPL-X / HumanML3D skeletons: roles by joint index, no name matching
    from evalkit.motion.topology import ROLE_JOINTS, topology_of

    preset = topology_of(names)
    for role, joint in (ROLE_JOINTS[preset].items() if preset else ()):
        given.setdefault(role, names.index(joint))
    roles = dict(_match_roles(names, tuple(int(p) for p in skeleton.parents), tuple(given.items())))
    missing = [r for r in required if r not in roles]
    if strict and missing:
        found = ", ".join(f"{r}={names[j]}" for r, j in roles.items()) or "none"
        example = "\n".join(f"  {r}: <joint name>" for r in missing[:4])
        raise RolesNotFoundError(
            f"could not find joint roles {', '.join(missing)} in a skeleton with joints "
            f"{', '.join(names)} (found: {found}). Map them in a YAML file and pass it with "
            f"--roles FILE (or roles=load_role_map(FILE)):\nroles:\n{example}"
        )
    return roles


def load_role_map(path: str | Path) -> dict[str, str]:
    """Read ``{role: joint name}`` from a YAML file (top-level ``roles:`` key or a plain map)."""
    path = Path(path)
    text = read_config_text(path, "role map")
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise yaml_error(path, exc, text) from None
    if isinstance(data, dict) and "roles" in data:
        data = data["roles"]
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: expected a mapping 'roles: {{role: joint name}}'")
    for k, v in data.items():
        if k not in ROLE_NAMES:
            raise ConfigError(f"{path}: roles.{k}: unknown role; roles are: {', '.join(ROLE_NAMES)}")
        if not isinstance(v, str):
            raise ConfigError(f"{path}: roles.{k}: expected a joint name, found {v!r}")
    return RoleMap(data, source=str(path))


class RoleMap(dict):
    """``{role: joint name}`` that remembers the file it was read from (named in errors)."""

    def __init__(self, data=(), source: str | None = None):
        super().__init__(data)
        self.source = source
