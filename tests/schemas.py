"""The exposure rules of tool schemas (see docs/concepts/servers.md), shared by the generic suite and the
per-server tests."""

from __future__ import annotations

from typing import Any


def violations(node: Any, path: str = "") -> list[str]:
    """Rule violations inside a parameter schema (see docs/concepts/servers.md)."""
    problems: list[str] = []
    if isinstance(node, dict):
        for banned in ("$ref", "$defs", "title", "oneOf", "allOf", "not", "ge", "le"):
            if banned in node and not (banned == "title" and path.endswith(".properties")):
                problems.append(f"{path}: has {banned}")
        if "default" in node and node["default"] is None:
            problems.append(f"{path}: null default")
        if node.get("type") == "array" and "items" not in node:
            problems.append(f"{path}: array without items")
        if node.get("type") == "object" and "properties" not in node and "additionalProperties" not in node:
            problems.append(f"{path}: open object")
        for key, value in node.items():
            problems += violations(value, f"{path}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            problems += violations(value, f"{path}[{i}]")
    return problems
