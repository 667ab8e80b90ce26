"""A content-addressed cache of built worlds, so that a reset of a world built before copies it
instead of generating and measuring it again.

An entry is a whole world directory, `<cache dir>/worlds/<key>/world/`, where the key is a digest
of what determines the world (the caller's business: task, generator version and code, params,
seed). Entries are published atomically (built under a temporary name, then renamed; of two
processes publishing the same key, one wins and the other's copy is dropped) and never changed
afterwards. A hit is verified: the digest of the copy's files must equal the one taken when the
entry was published (the world as served, measurement included), else the entry is dropped and
the caller builds the world itself, whose publish then stores it again; an entry missing any
part (its world folder, a file, its digest) is dropped the same way. (A digest of the bytes
rather than `content_hash`, which reads every database row: the same guarantee for a copy, at
disk speed; sizes and times alone would miss a byte changed in place.) Aliases map a
request that does not name params (a target length and a seed) to the key of the world it gave.

The cache holds at most `LOCA_WORLD_CACHE_MB` megabytes (default 2048; 0 turns it off; it is
off as well when the user cache is, `LOCA_CACHE_DIR=""`). When a publish takes it over the
limit, the entries used least recently (each hit touches its entry) are removed until it fits;
each entry records its size when published, so sizing the cache reads no world. `loca cache
info` shows the entries against the limit, `loca cache clear` empties the cache."""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from loca.core.cache import cache_dir
from loca.core.world import World, WorldError

LIMIT_ENV = "LOCA_WORLD_CACHE_MB"
DEFAULT_LIMIT_MB = 2048
_USED = "used"  # beside an entry's world; touched on every hit (its mtime orders eviction)
_DIGEST = "digest"  # beside an entry's world: the digest of its files a copy must have
_SIZE = "size"  # beside an entry's world: its bytes, so that sizing the cache reads no world
log = logging.getLogger("loca.world_cache")


@dataclass(frozen=True)
class WorldCache:
    """The world cache at `root`, holding at most `limit_bytes`."""

    root: Path
    limit_bytes: int

    def restore(self, key: str, dest: Path) -> World | None:
        """A copy of entry `key` at `dest` (replacing anything there), or None on a miss or an
        entry that fails verification (which is then dropped, so that the next publish of `key`
        stores it again)."""
        entry = self.root / key
        if not entry.is_dir():
            return None
        if dest.exists():
            shutil.rmtree(dest)
        try:
            shutil.copytree(entry / "world", dest)
            world = World.load(dest, complete=True)
            intact = files_digest(dest) == (entry / _DIGEST).read_text(encoding="ascii")
        except (OSError, ValueError, WorldError) as exc:
            log.warning("world cache entry %s is unreadable: %s", key, exc)
            intact = False
        if not intact:
            log.warning("world cache entry %s failed verification; removed", key)
            shutil.rmtree(entry, ignore_errors=True)
            shutil.rmtree(dest, ignore_errors=True)
            return None
        (entry / _USED).touch()
        return world

    def publish(self, key: str, world: World) -> None:
        """Store a copy of `world` as entry `key` (kept as it is if already there); best effort:
        a full disk or a read-only cache only logs a warning."""
        entry = self.root / key
        if entry.exists():
            return
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            staging = Path(tempfile.mkdtemp(prefix=f".{key}.", dir=self.root))
            try:
                shutil.copytree(world.root, staging / "world")
                (staging / _DIGEST).write_text(files_digest(staging / "world"), encoding="ascii")
                (staging / _SIZE).write_text(str(_size(staging / "world")), encoding="ascii")
                (staging / _USED).touch()
                try:
                    os.rename(staging, entry)
                except OSError:  # another process published it first
                    pass
            finally:
                shutil.rmtree(staging, ignore_errors=True)
            self._evict()
        except OSError as exc:
            log.warning("world cache: could not store %s: %s", key, exc)

    def alias(self, name: str) -> str | None:
        """The entry key alias `name` points to, if it was recorded."""
        try:
            found = json.loads((self.root / "aliases" / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return found if isinstance(found, str) else None

    def set_alias(self, name: str, key: str) -> None:
        path = self.root / "aliases" / name
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{name}.", dir=path.parent)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(json.dumps(key))
            os.replace(tmp, path)
        except OSError as exc:
            log.warning("world cache: could not record alias %s: %s", name, exc)

    def entries(self) -> list[tuple[float, int, Path]]:
        """(last use, bytes, folder) of every entry."""
        if not self.root.is_dir():
            return []
        found = []
        for entry in self.root.iterdir():
            if entry.name.startswith(".") or entry.name == "aliases" or not entry.is_dir():
                continue
            try:
                used = (entry / _USED).stat().st_mtime
            except OSError:
                used = 0.0
            found.append((used, _entry_size(entry), entry))
        return found

    def _evict(self) -> None:
        """Remove least recently used entries while the cache is over its limit."""
        entries = self.entries()
        total = sum(size for _, size, _ in entries)
        for _, size, entry in sorted(entries, key=lambda e: (e[0], e[2].name)):
            if total <= self.limit_bytes:
                break
            shutil.rmtree(entry, ignore_errors=True)
            total -= size


def files_digest(root: Path) -> str:
    """sha256 over the relative path and the bytes of every file under `root`, in path order."""
    h = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        h.update(path.relative_to(root).as_posix().encode() + b"\0")
        with open(path, "rb") as fh:
            h.update(hashlib.file_digest(fh, "sha256").digest())
    return h.hexdigest()


def _size(root: Path) -> int:
    return sum(p.stat().st_size for p in root.rglob("*") if p.is_file())


def _entry_size(entry: Path) -> int:
    """The bytes of an entry's world, as recorded when it was published (measured for entries
    stored before sizes were recorded)."""
    try:
        return int((entry / _SIZE).read_text(encoding="ascii"))
    except (OSError, ValueError):
        return _size(entry / "world")


def limit_mb() -> int:
    """The world cache's limit in megabytes (`LOCA_WORLD_CACHE_MB`, else the default)."""
    raw = os.environ.get(LIMIT_ENV, "").strip()
    try:
        return int(raw) if raw else DEFAULT_LIMIT_MB
    except ValueError:
        raise ValueError(f"{LIMIT_ENV} must be a whole number of megabytes, not {raw!r}") from None


def world_cache() -> WorldCache | None:
    """The configured world cache, or None when it is off."""
    base, limit = cache_dir(), limit_mb()
    if base is None or limit <= 0:
        return None
    return WorldCache(base / "worlds", limit * 1024 * 1024)

