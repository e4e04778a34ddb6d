"""Where each key of a YAML document stands: the line map that config errors cite.

Configuration files (``pipeline.yaml``, ``study.yaml``) are validated after ``yaml.safe_load``;
their errors name the line of the offending key, found here from PyYAML's node marks. Syntax
errors themselves are reported by :func:`evalkit.errors.yaml_error`.
"""

from __future__ import annotations

import yaml


def key_lines(text: str) -> dict[tuple, int]:
    """1-based line of every key path of a YAML document: ``("requests", 0, "to") -> 7``.

    Mapping keys map to the line of the key, sequence entries to the line where the entry
    starts. A document that does not parse gives ``{}`` (its syntax error is reported elsewhere).
    """
    out: dict[tuple, int] = {}
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return out
    stack = [((), node)] if node is not None else []
    while stack:
        kp, n = stack.pop()
        if isinstance(n, yaml.MappingNode):
            for k, v in n.value:
                out[kp + (k.value,)] = k.start_mark.line + 1
                stack.append((kp + (k.value,), v))
        elif isinstance(n, yaml.SequenceNode):
            for i, v in enumerate(n.value):
                out[kp + (i,)] = v.start_mark.line + 1
                stack.append((kp + (i,), v))
    return out
