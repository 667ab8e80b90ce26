"""Tool parameter schemas in the form every server exposes (servers.md section 4)."""

from __future__ import annotations

from typing import Any

_BOUNDS = {"ge": "minimum", "le": "maximum", "gt": "exclusiveMinimum", "lt": "exclusiveMaximum"}


def normalize_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """Apply the schema rules: references inlined, no titles, optionals as their plain type,
    unions of scalars as a type list, no null defaults, bounds as `minimum`/`maximum`, closed
    objects."""
    defs = schema.get("$defs", {})

    def walk(node: Any) -> Any:
        if isinstance(node, list):
            return [walk(v) for v in node]
        if not isinstance(node, dict):
            return node
        if "$ref" in node:
            target = defs[node["$ref"].rsplit("/", 1)[-1]]
            node = {**target, **{k: v for k, v in node.items() if k != "$ref"}}
        out: dict[str, Any] = {}
        for key, value in node.items():
            if key in ("title", "$defs"):
                continue
            if key == "properties" and isinstance(value, dict):
                out[key] = {name: walk(prop) for name, prop in value.items()}
            else:
                out[_BOUNDS.get(key, key)] = walk(value)
        any_of = out.get("anyOf")
        if isinstance(any_of, list):
            rest = {k: v for k, v in out.items() if k != "anyOf"}
            non_null = [s for s in any_of if s != {"type": "null"}]
            if len(non_null) == 1 and len(non_null) < len(any_of):
                out = {**non_null[0], **rest}
            elif all(set(s) == {"type"} and isinstance(s["type"], str) for s in any_of):
                types = [s["type"] for s in any_of]
                if "number" in types:
                    types = [t for t in types if t != "integer"]
                out = {"type": list(dict.fromkeys(types)), **rest}
        if "default" in out and out["default"] is None:
            del out["default"]
        if out.get("type") == "object" and "properties" in out:
            out.setdefault("additionalProperties", False)
        return out

    result = walk(schema)
    result.setdefault("properties", {})
    result.setdefault("required", [])
    return result
