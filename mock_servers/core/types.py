"""Argument types shared by every server: lossless coercion only (`"12"` and `12.0` become 12;
`12.5`, `"abc"` and `true` are rejected)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, Field


def _no_bool(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("a boolean is not a number")
    return value


Int = Annotated[int, BeforeValidator(_no_bool)]
CellValue = str | float | int | bool | None


def page_param(description: str = "1-based page number") -> Any:
    return Field(ge=1, description=description)


def size_param(default: int, maximum: int, what: str = "items per page") -> Any:
    return Field(ge=1, le=maximum, description=f"{what} (default {default}, max {maximum})")
