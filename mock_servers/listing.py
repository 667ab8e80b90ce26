"""Tool listings (each tool's description and parameter schema) without building the tools.
Building a tool parses its signature into a validator and a schema, a few milliseconds a tool,
so listing a task's ~100 tools costs a fresh process most of a second. The listings are built
once per process and kept across processes in a cache file keyed by the servers' source code
and the versions of the libraries that shape the schemas, so a fresh process reads them in a
few milliseconds and builds only the tools it calls (see `gateway.Gateway`). A cache that
cannot be read or written is rebuilt, never trusted: the listing is always the built one."""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

from loca.core.cache import cache_dir, write_cache_file
from mock_servers.core.toolkit import Toolbox

_SOURCE_ROOT = Path(__file__).resolve().parent
_LIBRARIES = ("fastmcp", "mcp", "pydantic", "pydantic-core")
log = logging.getLogger("loca.servers")


@dataclass(frozen=True)
class Listing:
    description: str
    parameters: dict[str, Any]


_listings: dict[str, dict[str, Listing]] = {}  # server -> tool -> listing, this process


def listings(toolbox: Toolbox) -> dict[str, Listing]:
    """Every tool of `toolbox` as listed: from this process, else the cache file, else built
    (and the cache file rewritten)."""
    known = _listings.setdefault(toolbox.server, {})
    if not set(toolbox.defs) <= set(known):
        for server, cached in _read_cache().items():  # every server's at once: one parse a process
            _listings.setdefault(server, {}).update(cached)
    missing = [name for name in toolbox.defs if name not in known]
    if missing:
        for name in missing:
            tool = toolbox.template(name, name, "")
            known[name] = Listing(tool.description or "", tool.parameters)
        _write_cache()
    return {name: known[name] for name in toolbox.defs}


def cache_path() -> Path | None:
    """The cache file of the current sources, or None when caching is off."""
    base = cache_dir()
    return None if base is None else base / f"tool-listings-{_source_key()[:20]}.json"


@lru_cache(maxsize=1)
def _source_key() -> str:
    """sha256 of every source file of the servers and of the schema-shaping libraries' versions."""
    h = hashlib.sha256()
    for lib in _LIBRARIES:
        h.update(f"{lib}={metadata.version(lib)}\n".encode())
    for path in sorted(_SOURCE_ROOT.rglob("*.py")):
        h.update(f"\x1e{path.relative_to(_SOURCE_ROOT).as_posix()}\n".encode())
        h.update(path.read_bytes())
    return h.hexdigest()


def _read_cache() -> dict[str, dict[str, Listing]]:
    path = cache_path()
    if path is None or not path.is_file():
        return {}
    try:
        raw = json.loads(path.read_text(encoding="utf-8"))
        return {server: {name: Listing(item["description"], item["parameters"]) for name, item in tools.items()}
                for server, tools in raw.items()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        log.warning("ignoring the unreadable tool listing cache %s: %s", path, exc)
        return {}


def _write_cache() -> None:
    path = cache_path()
    if path is None:
        return
    merged = {**_read_cache(), **_listings}
    data = {server: {name: {"description": item.description, "parameters": item.parameters}
                     for name, item in sorted(tools.items())} for server, tools in sorted(merged.items())}
    try:
        write_cache_file(path, json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode())
    except OSError as exc:
        log.warning("cannot write the tool listing cache %s: %s", path, exc)
