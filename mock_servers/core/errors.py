"""Tool errors: `Error [CODE]: <tool>: <message>` with an optional `Hint:` line."""

from __future__ import annotations

import re
from enum import Enum
from typing import Any

from pydantic import ValidationError as PydanticValidationError


class Code(str, Enum):
    INVALID_ARGUMENT = "INVALID_ARGUMENT"
    NOT_FOUND = "NOT_FOUND"
    ALREADY_EXISTS = "ALREADY_EXISTS"
    FAILED_PRECONDITION = "FAILED_PRECONDITION"
    PERMISSION_DENIED = "PERMISSION_DENIED"
    UNAUTHENTICATED = "UNAUTHENTICATED"
    RESOURCE_EXHAUSTED = "RESOURCE_EXHAUSTED"
    DEADLINE_EXCEEDED = "DEADLINE_EXCEEDED"
    UNIMPLEMENTED = "UNIMPLEMENTED"
    INTERNAL = "INTERNAL"


class ToolFailure(Exception):
    """Raised by tool and domain code for every expected failure. The toolkit turns it into an
    MCP error result; the tool name is filled in there."""

    def __init__(self, code: Code, message: str, hint: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.hint = hint


def invalid(message: str, hint: str | None = None) -> ToolFailure:
    return ToolFailure(Code.INVALID_ARGUMENT, message, hint)


def not_found(message: str, hint: str | None = None) -> ToolFailure:
    return ToolFailure(Code.NOT_FOUND, message, hint)


def denied(message: str, hint: str | None = None) -> ToolFailure:
    return ToolFailure(Code.PERMISSION_DENIED, message, hint)


MAX_TOOL_NAME = 64  # a longer name is no tool's and is shown shortened


def _shown(tool: str) -> str:
    return tool if len(tool) <= MAX_TOOL_NAME else tool[:MAX_TOOL_NAME] + "…"


def format_error(tool: str, code: Code | str, message: str, hint: str | None = None) -> str:
    code_text = code.value if isinstance(code, Code) else code
    text = f"Error [{code_text}]: {_shown(tool)}: {message}"
    return f"{text}\nHint: {hint}" if hint else text


def unknown_tool(name: str) -> str:
    """The error of a call to a tool that does not exist (a name of any length)."""
    return format_error(name, Code.NOT_FOUND, f"unknown tool '{_shown(name)}'")


def cap_error(text: str, max_chars: int) -> str:
    """An error text within the output cap: the message is cut with an inline marker, the
    hint line kept when it fits."""
    if len(text) <= max_chars:
        return text
    head, sep, hint = text.rpartition("\nHint: ") if "\nHint: " in text else (text, "", "")
    if len(sep) + len(hint) > max_chars // 2:
        head, sep, hint = text, "", ""
    marker = f"…[truncated {len(head)} chars]"  # an upper bound on what is cut; fits in any case
    keep = max(0, max_chars - len(marker) - len(sep) - len(hint))
    return f"{head[:keep]}…[truncated {len(head) - keep} chars]{sep}{hint}"


_HOST_PATH = re.compile(r"(/[\w.\-]+){2,}")


def strip_host_paths(text: str) -> str:
    return _HOST_PATH.sub("<path>", text)


_SECRET_PARAMS = {"password", "secret", "token", "api_key", "access_code"}


def _describe_value(param: str, value: object) -> str:
    if param.split(".")[-1] in _SECRET_PARAMS:
        return "<hidden>"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _bounds(schema: dict[str, Any]) -> str:
    low, high = schema.get("minimum"), schema.get("maximum")
    if low is not None and high is not None:
        return f"; allowed {low}..{high}"
    if low is not None:
        return f"; minimum {low}"
    if high is not None:
        return f"; maximum {high}"
    return ""


def format_validation_error(tool: str, exc: PydanticValidationError,
                            properties: dict[str, dict[str, Any]]) -> str:
    """Rewrite pydantic's argument errors into one readable INVALID_ARGUMENT message;
    `properties` is the tool's parameter schema (names, bounds)."""
    problems: list[str] = []
    for err in exc.errors():
        loc = [str(p) for p in err.get("loc", ()) if p != "args"]
        param = ".".join(loc) or "arguments"
        kind = err.get("type", "")
        if kind == "unexpected_keyword_argument":
            problems.append(f"unknown parameter '{param}'; allowed: {', '.join(sorted(properties)) or 'none'}")
        elif kind in ("missing_argument", "missing"):
            problems.append(f"missing required parameter '{param}'")
        else:
            msg = err.get("msg", "invalid value")
            bounds = _bounds(properties.get(loc[0], {})) if loc else ""
            received = _describe_value(param, err.get("input"))
            problems.append(f"parameter '{param}': {msg}{bounds} (received {received})")
    return format_error(tool, Code.INVALID_ARGUMENT, "; ".join(problems))
