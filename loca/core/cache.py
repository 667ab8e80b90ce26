"""The per-user cache directory of things that are slow to build and derived only from code and
data shipped with the installed packages (tool listings, the tokenizer's parsed vocabulary, compiled templates).
`LOCA_CACHE_DIR` names it; set to the empty string, nothing is cached on disk."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

CACHE_DIR_ENV = "LOCA_CACHE_DIR"


def cache_dir() -> Path | None:
    """`$LOCA_CACHE_DIR`, else `$XDG_CACHE_HOME/loca` or `~/.cache/loca`; None when caching is off."""
    configured = os.environ.get(CACHE_DIR_ENV)
    if configured == "":
        return None
    if configured:
        return Path(configured)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "loca"


def write_cache_file(path: Path, data: bytes) -> None:
    """Write `data` to `path` through a temporary file of its own (concurrent writers of the same
    file each rename a whole one). Raises OSError."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
