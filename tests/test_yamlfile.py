"""The one way to report YAML problems: syntax errors with their line (evalkit.errors.yaml_error),
key paths with theirs (evalkit.yamlfile.key_lines), unreadable config files by name."""

from __future__ import annotations

import pytest
import yaml

from evalkit.errors import ConfigError, yaml_error
from evalkit.textfile import read_config_text
from evalkit.yamlfile import key_lines


def _error(text: str) -> ConfigError:
    try:
        yaml.safe_load(text)
    except yaml.YAMLError as exc:
        return yaml_error("f.yaml", exc, text, fix="fix: check the quoting")
    raise AssertionError("the text parsed")


def test_syntax_errors_name_the_line_and_problem():
    msg = str(_error("a: 1\nb: [2, 3\nc: 4\n"))
    assert msg.startswith("f.yaml, line 3: not valid YAML (") and msg.endswith("; fix: check the quoting")
    # a character YAML does not allow carries an offset, not a mark: its line comes from the text
    assert str(_error("a: 1\nb: 2\nc: \x07\n")).startswith("f.yaml, line 3: not valid YAML (character #x0007 is not allowed)")


def test_key_lines_of_mappings_and_sequences():
    lines = key_lines("kind: x\nrequests:\n  - item: a\n    to: b\n  - item: c\n")
    assert lines[("kind",)] == 1 and lines[("requests",)] == 2
    assert lines[("requests", 0)] == 3 and lines[("requests", 0, "to")] == 4 and lines[("requests", 1, "item")] == 5
    assert key_lines("a: [1,\n") == {}


def test_config_files_that_cannot_be_read_are_named(tmp_path):
    with pytest.raises(ConfigError, match=r"nope\.yaml: role map file not found"):
        read_config_text(tmp_path / "nope.yaml", "role map")
    with pytest.raises(ConfigError, match="is a folder, expected a registry YAML file"):
        read_config_text(tmp_path, "registry")
