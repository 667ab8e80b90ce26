"""Reading provider data, shared by the clients: responses are handled as plain dicts (the SDK
objects' `model_dump()`), so fields of any shape are seen and checked where they are used."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

T = TypeVar("T")


class ProviderError(Exception):
    """The provider reported an error inside a successful (HTTP 200) response. `error` is what
    it sent (usually a mapping with a `message`)."""

    def __init__(self, error: Any) -> None:
        super().__init__(str(error))
        self.error = error


class MalformedResponse(ValueError):
    """The server answered with something that is not a reply of the expected kind."""


def as_mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def token_count(value: Any) -> int | None:
    """A token count as reported: a non-negative integer (an integral float passes), else None."""
    if isinstance(value, bool):
        return None
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return value if isinstance(value, int) and value >= 0 else None


def parsed(convert: Callable[..., T], *args: Any) -> T:
    """`convert(*args)` on provider data; data of an unexpected shape is a malformed response."""
    try:
        return convert(*args)
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise MalformedResponse(f"{type(exc).__name__}: {exc}") from exc
