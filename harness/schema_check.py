"""A small JSON Schema (draft 2020-12) validator for the subset schema/layer-table.schema.json uses.

`jsonschema` is not installed on every host that runs the harness, and the layer-table schema
needs only a handful of keywords. A keyword outside the subset raises, so the schema cannot grow
a constraint this validator silently ignores.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Dict, List, Union

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "schema" / "layer-table.schema.json"


def is_functional_row(row: Dict[str, Any]) -> bool:
    """A row of a functional call (`torch.cat`, `torch.layer_norm`, ...; rule 2 of docs/layer-table.md),
    not of a module or a parameter. Here, torch-free, so the training table's export can use it."""
    return str(row.get("type", "")).startswith("torch.")


#: The functional rows of concatenations: what the learned estimators' functional features count
#: (src/core/layerTable/layerTable.ts, isConcatenationRow), and the only ones timm's catalog records.
CONCATENATION_ROWS = frozenset({"torch.cat", "torch.stack"})


def is_concatenation_row(row: Dict[str, Any]) -> bool:
    """A functional row of a concatenation (`torch.cat`, `torch.stack`)."""
    return row.get("type") in CONCATENATION_ROWS

#: Keywords that only annotate.
_ANNOTATIONS = {"$schema", "$id", "$defs", "title", "description", "$comment", "examples", "default"}
_SUPPORTED = _ANNOTATIONS | {
    "type", "const", "enum", "properties", "required", "additionalProperties", "items",
    "minimum", "maximum", "minLength", "minItems", "maxItems", "$ref",
}

_TYPES = {
    "object": lambda v: isinstance(v, dict),
    "array": lambda v: isinstance(v, list),
    "string": lambda v: isinstance(v, str),
    "boolean": lambda v: isinstance(v, bool),
    "null": lambda v: v is None,
    "integer": lambda v: isinstance(v, int) and not isinstance(v, bool) or (isinstance(v, float) and v.is_integer()),
    "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
}


class SchemaError(ValueError):
    """The instance does not match the schema; `errors` lists every violation with its JSON path."""

    def __init__(self, errors: List[str]):
        super().__init__("\n".join(errors))
        self.errors = errors


def load_schema(path: Union[str, Path] = SCHEMA_PATH) -> Dict[str, Any]:
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)


def errors(instance: Any, schema: Dict[str, Any]) -> List[str]:
    """Every violation of `schema` by `instance`, as 'path: message' strings."""
    found: List[str] = []
    _check(instance, schema, schema, "$", found)
    return found


def validate(instance: Any, schema: Union[Dict[str, Any], None] = None) -> None:
    """Raises SchemaError unless `instance` matches `schema` (default: the layer-table schema)."""
    schema = load_schema() if schema is None else schema
    found = errors(instance, schema)
    if found:
        raise SchemaError(found)


def _resolve(root: Dict[str, Any], ref: str) -> Dict[str, Any]:
    if not ref.startswith("#/"):
        raise NotImplementedError(f"only local $ref is supported, not {ref!r}")
    node: Any = root
    for part in ref[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node


def _check(value: Any, schema: Dict[str, Any], root: Dict[str, Any], where: str, found: List[str]) -> None:
    unknown = set(schema) - _SUPPORTED
    if unknown:
        raise NotImplementedError(f"schema keywords not supported by harness.schema_check: {sorted(unknown)}")
    if "$ref" in schema:
        _check(value, _resolve(root, schema["$ref"]), root, where, found)
    if "type" in schema:
        types = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        if not any(_TYPES[t](value) for t in types):
            found.append(f"{where}: expected {' or '.join(types)}, got {json.dumps(value)[:60]}")
            return
    if "const" in schema and not _same(value, schema["const"]):
        found.append(f"{where}: expected {json.dumps(schema['const'])}, got {json.dumps(value)[:60]}")
    if "enum" in schema and not any(_same(value, option) for option in schema["enum"]):
        found.append(f"{where}: {json.dumps(value)[:60]} is not one of {json.dumps(schema['enum'])}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            found.append(f"{where}: {value} < minimum {schema['minimum']}")
        if "maximum" in schema and value > schema["maximum"]:
            found.append(f"{where}: {value} > maximum {schema['maximum']}")
    if isinstance(value, str) and "minLength" in schema and len(value) < schema["minLength"]:
        found.append(f"{where}: shorter than {schema['minLength']} characters")
    if isinstance(value, list):
        if "minItems" in schema and len(value) < schema["minItems"]:
            found.append(f"{where}: fewer than {schema['minItems']} items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            found.append(f"{where}: more than {schema['maxItems']} items")
        if "items" in schema:
            for index, item in enumerate(value):
                _check(item, schema["items"], root, f"{where}[{index}]", found)
    if isinstance(value, dict):
        for key in schema.get("required", []):
            if key not in value:
                found.append(f"{where}: missing required property {key!r}")
        properties = schema.get("properties", {})
        for key, item in value.items():
            if key in properties:
                _check(item, properties[key], root, f"{where}.{key}", found)
            elif schema.get("additionalProperties", True) is False:
                found.append(f"{where}: unexpected property {key!r}")
            elif isinstance(schema.get("additionalProperties"), dict):
                _check(item, schema["additionalProperties"], root, f"{where}.{key}", found)


def _same(a: Any, b: Any) -> bool:
    """JSON equality: 1 and True differ."""
    return type(a) is type(b) and a == b if isinstance(a, bool) or isinstance(b, bool) else a == b
