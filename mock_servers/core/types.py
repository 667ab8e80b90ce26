"""Argument types shared by every server: lossless coercion only (`"12"` and `12.0` become 12;
`12.5`, `"abc"` and `true` are rejected)."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import AfterValidator, BeforeValidator, Field

from mock_servers.core.limits import MAX_INT, MIN_INT


def no_bool(value: Any) -> Any:
    if isinstance(value, bool):
        raise ValueError("a boolean is not a number")
    return value


def _in_range(value: int) -> int:
    if not MIN_INT <= value <= MAX_INT:
        raise ValueError(f"integer out of range (allowed {MIN_INT}..{MAX_INT})")
    return value


# An integer SQLite can hold, also when it arrives as text ("12").
Int = Annotated[int, BeforeValidator(no_bool), AfterValidator(_in_range)]
Num = Annotated[float, BeforeValidator(no_bool), Field(allow_inf_nan=False)]  # a finite number
CellValue = str | float | int | bool | None


def page_param(description: str = "1-based page number") -> Any:
    return Field(ge=1, description=description)


def size_param(default: int, maximum: int, what: str = "items per page") -> Any:
    return Field(ge=1, le=maximum, description=f"{what} (default {default}, max {maximum})")
