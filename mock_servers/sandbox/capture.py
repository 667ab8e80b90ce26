"""A child's output stream, decoded as it arrives and capped: the exact character count, the
head and the tail are kept, the middle is replaced by one marker."""

from __future__ import annotations

import codecs


class Capture:
    """Up to `limit` characters of a stream: all of it when it fits, else its first and last
    halves around `…[N characters omitted]…`. Undecodable bytes become U+FFFD."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.total = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        self._head = ""  # the first `limit` characters
        self._tail = ""  # the last `limit // 2` characters
        self._closed = False

    def feed(self, data: bytes) -> None:
        self._add(self._decoder.decode(data))

    def text(self) -> str:
        if not self._closed:
            self._add(self._decoder.decode(b"", True))
            self._closed = True
        if self.total <= self.limit:
            return self._head
        tail_len = self.limit // 2
        head_len = self.limit - tail_len
        omitted = self.total - head_len - tail_len
        tail = self._tail[-tail_len:] if tail_len else ""
        return f"{self._head[:head_len]}\n…[{omitted} characters omitted]…\n{tail}"

    def _add(self, text: str) -> None:
        if not text:
            return
        self.total += len(text)
        if len(self._head) < self.limit:
            self._head += text[: self.limit - len(self._head)]
        keep = self.limit // 2
        self._tail = (self._tail + text)[-keep:] if keep else ""
