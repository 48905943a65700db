"""harness.config: the YAML subset read without PyYAML, and JSON configs."""
import json
import sys
from pathlib import Path

import pytest
import yaml

from harness.config import ConfigError, load_config, parse_simple_yaml

CONFIGS = Path(__file__).resolve().parents[1] / "configs"


@pytest.mark.parametrize("name", sorted(p.name for p in CONFIGS.glob("*.yaml")))
def test_shipped_configs_read_the_same_with_and_without_pyyaml(name):
    text = (CONFIGS / name).read_text(encoding="utf-8")
    assert parse_simple_yaml(text) == yaml.safe_load(text)


def test_subset_scalars_lists_comments_and_nesting():
    text = """
seed: 3   # a comment
name: 'a # not a comment'
flags: [true, no, null, 1.5, "x, y"]
nested:
  deeper:
    shapes: [[1, 28, 28], [784]]
  empty:
after: 1
"""
    assert parse_simple_yaml(text) == {
        "seed": 3,
        "name": "a # not a comment",
        "flags": [True, False, None, 1.5, "x, y"],
        "nested": {"deeper": {"shapes": [[1, 28, 28], [784]]}, "empty": None},
        "after": 1,
    }


@pytest.mark.parametrize("text,message", [
    ("a:\n  - 1\n", "block lists"),
    ("a: 1\na: 2\n", ":2: duplicate key 'a'"),
    ("a:\n    b: 1\n  c: 2\n", ":3: bad indentation"),
    ("a: [1, 2\n", "unterminated list"),
    ("just text\n", "expected 'key: value'"),
])
def test_subset_errors_name_the_line(text, message):
    with pytest.raises(ConfigError, match=message.replace("[", r"\[")):
        parse_simple_yaml(text)


def test_load_config_without_pyyaml_uses_the_subset(tmp_path, monkeypatch):
    path = tmp_path / "c.yaml"
    path.write_text("families:\n  mlp:\n    count: 2\n", encoding="utf-8")
    monkeypatch.setitem(sys.modules, "yaml", None)  # import yaml now raises ImportError
    assert load_config(path) == {"families": {"mlp": {"count": 2}}}


def test_load_config_json_and_errors(tmp_path):
    path = tmp_path / "c.json"
    path.write_text(json.dumps({"families": {"cnn": {"count": 1}}}), encoding="utf-8")
    assert load_config(path) == {"families": {"cnn": {"count": 1}}}
    path.write_text("[1, 2]", encoding="utf-8")
    with pytest.raises(ConfigError, match="mapping at the top level"):
        load_config(path)
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "missing.yaml")
