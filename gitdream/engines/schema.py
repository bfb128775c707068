"""A small JSON Schema validator for the tool inputs the engines ask for.

It covers the subset the unit and verdict schemas use — `type` (object, array, string,
integer, boolean), `enum`, `properties`, `required`, `additionalProperties: false`,
`items`, `minItems`/`maxItems`, `minLength`/`maxLength` and `pattern` — and reports every
violation with a JSON path (`$.units[2].topic`), so the message can go back to the model
in a retry. Keywords outside the subset are ignored, as JSON Schema ignores unknown ones.
"""

from __future__ import annotations

import re
from typing import Any

_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "boolean": (bool,),
}


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def validate(value: Any, schema: dict[str, Any], path: str = "$") -> list[str]:
    """The violations of `value` against `schema` (empty when valid), e.g.
    `["$.units[0].target: 'file' is not one of 'experience', 'skill', 'soul', 'agent'"]`."""
    errors: list[str] = []
    expected = schema.get("type")
    if expected is not None:
        types = _TYPES[expected]
        wrong = not isinstance(value, types) or (expected == "integer" and isinstance(value, bool))
        if wrong:
            return [f"{path}: expected {expected}, got {type(value).__name__} {_short(value)}"]
    if "enum" in schema and value not in schema["enum"]:
        allowed = ", ".join(repr(v) for v in schema["enum"])
        errors.append(f"{path}: {_short(value)} is not one of {allowed}")
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            errors.append(f"{path}: shorter than {schema['minLength']} characters")
        elif "maxLength" in schema and len(value) > schema["maxLength"]:
            errors.append(f"{path}: longer than {schema['maxLength']} characters")
        elif "pattern" in schema and not re.search(schema["pattern"], value):  # one problem per string
            errors.append(f"{path}: {_short(value)} does not match {schema['pattern']}")
    if isinstance(value, list):
        if len(value) < schema.get("minItems", 0):
            errors.append(f"{path}: fewer than {schema['minItems']} items")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            errors.append(f"{path}: more than {schema['maxItems']} items")
        if "items" in schema:
            for index, item in enumerate(value):
                errors += validate(item, schema["items"], f"{path}[{index}]")
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        for name in schema.get("required", []):
            if name not in value:
                errors.append(f"{path}: missing required property {name!r}")
        for name, item in value.items():
            if name in properties:
                errors += validate(item, properties[name], f"{path}.{name}")
            elif schema.get("additionalProperties") is False:
                errors.append(f"{path}: unexpected property {name!r}")
    return errors
