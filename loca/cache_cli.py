"""`loca cache info|clear`: what the per-user cache holds (the world cache's worlds, their size
against its limit, and the smaller things: tool listings, token counts, the tokenizer's
vocabulary, compiled templates), and emptying it. Everything there is derived from the installed
packages and is rebuilt when missing."""

from __future__ import annotations

import shutil
from pathlib import Path

import typer

cache_app = typer.Typer(no_args_is_help=True, help="The per-user cache (~/.cache/loca, LOCA_CACHE_DIR): "
                                                   "what it holds, the world cache's limit; empty it.")
MB = 2**20
"""`LOCA_WORLD_CACHE_MB` counts megabytes of 2**20 bytes; sizes are shown the same way."""


def _bytes(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file()) if root.is_dir() else 0


@cache_app.command()
def info() -> None:
    """Where the cache is, how many worlds its world cache holds and their size against its
    limit, and the size of the rest."""
    from loca.core.cache import cache_dir
    from loca.core.world_cache import LIMIT_ENV, WorldCache, limit_mb

    base = cache_dir()
    if base is None:
        typer.echo("cache: off (LOCA_CACHE_DIR is empty); nothing is cached on disk")
        return
    limit = limit_mb()
    entries = WorldCache(base / "worlds", limit * MB).entries()
    stored = sum(size for _, size, _ in entries)
    state = f"limit {limit:,} MB ({LIMIT_ENV})" if limit > 0 else f"off ({LIMIT_ENV}={limit}), kept from before"
    typer.echo(f"cache: {base}")
    typer.echo(f"world cache: {len(entries):,} world{'' if len(entries) == 1 else 's'}, "
               f"{stored / MB:,.1f} MB; {state}")
    typer.echo(f"tool listings, token counts, tokenizer, templates: "
               f"{(_bytes(base) - _bytes(base / 'worlds')) / MB:,.1f} MB")


@cache_app.command()
def clear() -> None:
    """Empty the cache (worlds and everything else); what a run needs is rebuilt when missing."""
    from loca.core.cache import cache_dir

    base = cache_dir()
    if base is None or not base.is_dir():
        typer.echo("cache: nothing to clear")
        return
    freed = _bytes(base)
    for path in base.iterdir():
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, ignore_errors=True)
        else:
            path.unlink(missing_ok=True)
    typer.echo(f"cleared {base}: {freed / MB:,.1f} MB freed")
