"""The tool catalogue: every server's tools with their tags, kept in `catalog.json` beside this
module so that listing tasks and counting their tools imports no server. It is derived from the
servers' tool definitions: `python -m mock_servers.catalog` rewrites it, and a test fails when it
is out of date."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path

CATALOG_FILE = Path(__file__).with_name("catalog.json")

# server type -> tool name -> {"rw": "read" | "write", "core": bool}
Catalog = dict[str, dict[str, dict[str, object]]]


def build() -> Catalog:
    """The catalogue as the servers define it now (imports every server)."""
    from mock_servers import SERVERS, load_toolbox

    return {server: {name: {"rw": d.rw, "core": d.core}
                     for name, d in sorted(load_toolbox(server).defs.items())}
            for server in sorted(SERVERS)}


@cache
def load() -> Catalog:
    """The shipped catalogue."""
    catalog: Catalog = json.loads(CATALOG_FILE.read_text(encoding="utf-8"))
    return catalog


def render(catalog: Catalog) -> str:
    return json.dumps(catalog, indent=1, sort_keys=True) + "\n"


if __name__ == "__main__":
    CATALOG_FILE.write_text(render(build()), encoding="utf-8")
    print(f"wrote {CATALOG_FILE.name}")
