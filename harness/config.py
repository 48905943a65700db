"""Reading the collection config: YAML when PyYAML is installed, else a small YAML subset, or JSON.

GPU hosts do not always have PyYAML. The configs the harness ships (harness/configs/*.yaml) use
only the subset `parse_simple_yaml` reads: nested mappings by indentation, `key: value` with
scalars, flow lists (`[a, b, [1, 2]]`), `#` comments. A `.json` file is read as JSON.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any, Dict, List, Tuple, Union


class ConfigError(ValueError):
    """The config file cannot be read; the message names the file and line."""


def load_config(path: Union[str, Path]) -> Dict[str, Any]:
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as error:
        raise ConfigError(f"{path}: cannot read the config: {error.strerror or error}") from error
    if path.suffix.lower() == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            raise ConfigError(f"{path}:{error.lineno}: not valid JSON: {error.msg}") from error
    else:
        data = parse_yaml(text, str(path))
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the config must be a mapping at the top level")
    return data


def parse_yaml(text: str, where: str = "<config>") -> Any:
    try:
        import yaml  # type: ignore
    except ImportError:
        return parse_simple_yaml(text, where)
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ConfigError(f"{where}: not valid YAML: {error}") from error


_KEY = re.compile(r"^([A-Za-z_][A-Za-z0-9_.-]*)\s*:(.*)$")


def parse_simple_yaml(text: str, where: str = "<config>") -> Dict[str, Any]:
    """The YAML subset described in the module docstring; anything else raises ConfigError."""
    root: Dict[str, Any] = {}
    # Stack of (indent of the mapping's keys, mapping); a key with no value opens a nested mapping.
    stack: List[Tuple[int, Dict[str, Any]]] = [(0, root)]
    pending: Union[Tuple[int, Dict[str, Any], str], None] = None
    for number, raw in enumerate(text.splitlines(), start=1):
        line = _strip_comment(raw).rstrip()
        if not line.strip():
            continue
        if "\t" in raw[: len(raw) - len(raw.lstrip())]:
            raise ConfigError(f"{where}:{number}: tabs are not allowed for indentation")
        indent = len(line) - len(line.lstrip(" "))
        body = line.strip()
        if body.startswith("- "):
            raise ConfigError(f"{where}:{number}: block lists are not supported without PyYAML; write [a, b]")
        match = _KEY.match(body)
        if not match:
            raise ConfigError(f"{where}:{number}: expected 'key: value', got {body!r}")
        if pending is not None:
            parent_indent, parent, parent_key = pending
            pending = None
            if indent > parent_indent:
                child: Dict[str, Any] = {}
                parent[parent_key] = child
                stack.append((indent, child))
        while len(stack) > 1 and indent < stack[-1][0]:
            stack.pop()
        if indent != stack[-1][0]:
            raise ConfigError(f"{where}:{number}: bad indentation")
        mapping = stack[-1][1]
        key, rest = match.group(1), match.group(2).strip()
        if key in mapping:
            raise ConfigError(f"{where}:{number}: duplicate key {key!r}")
        if rest == "":
            pending = (indent, mapping, key)
            mapping[key] = None
        else:
            mapping[key] = _scalar_or_flow(rest, where, number)
    return root


def _strip_comment(line: str) -> str:
    quote = None
    for index, char in enumerate(line):
        if quote:
            if char == quote:
                quote = None
        elif char in "'\"":
            quote = char
        elif char == "#" and (index == 0 or line[index - 1] in " \t"):
            return line[:index]
    return line


def _scalar_or_flow(text: str, where: str, number: int) -> Any:
    if text.startswith("["):
        value, rest = _flow_list(text, 0, where, number)
        if text[rest:].strip():
            raise ConfigError(f"{where}:{number}: unexpected text after the list: {text[rest:]!r}")
        return value
    if text.startswith("{"):
        raise ConfigError(f"{where}:{number}: flow mappings are not supported without PyYAML")
    return _scalar(text)


def _flow_list(text: str, start: int, where: str, number: int) -> Tuple[List[Any], int]:
    assert text[start] == "["
    items: List[Any] = []
    index = start + 1
    token = ""
    while index < len(text):
        char = text[index]
        if char == "[":
            if token.strip():
                raise ConfigError(f"{where}:{number}: unexpected '[' in {text!r}")
            value, index = _flow_list(text, index, where, number)
            items.append(value)
            token = None  # type: ignore[assignment]
            continue
        if char in "'\"":
            end = text.find(char, index + 1)
            if end < 0:
                raise ConfigError(f"{where}:{number}: unterminated string in {text!r}")
            token = (token or "") + text[index : end + 1]
            index = end + 1
            continue
        if char in ",]":
            if token is not None and token.strip():
                items.append(_scalar(token.strip()))
            elif token is not None and char == ",":
                raise ConfigError(f"{where}:{number}: empty list item in {text!r}")
            token = ""
            index += 1
            if char == "]":
                return items, index
            continue
        if token is None:
            if char.strip():
                raise ConfigError(f"{where}:{number}: expected ',' after a nested list in {text!r}")
            index += 1
            continue
        token += char
        index += 1
    raise ConfigError(f"{where}:{number}: unterminated list {text!r}")


def _scalar(text: str) -> Any:
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    lowered = text.lower()
    if lowered in ("true", "yes", "on"):
        return True
    if lowered in ("false", "no", "off"):
        return False
    if lowered in ("null", "~"):
        return None
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text
