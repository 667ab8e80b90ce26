"""Names a user may give to files the sandbox writes for them."""

from __future__ import annotations

import re

DEFAULT_SCRIPT = "script.py"
MAX_NAME = 64
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


def safe_filename(name: str | None, default: str = DEFAULT_SCRIPT) -> str:
    """A user-supplied script name reduced to a safe basename: its last path component, only
    `[A-Za-z0-9_.-]`, no leading dots, ending in `.py`, at most 64 characters."""
    if not name:
        return default
    base = _UNSAFE.sub("", re.split(r"[\\/]", name)[-1]).lstrip(".")
    stem = base[:-3] if base.endswith(".py") else base
    return f"{stem[:MAX_NAME - 3]}.py" if stem.strip(".") else default
