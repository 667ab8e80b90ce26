"""A small passport-style photo as a real baseline JPEG, encoded here byte for byte (no imaging
library, so the bytes are the same on every machine): the picture is a grid of flat 8x8 blocks,
whose DCT has only a DC coefficient, so each block costs one DC difference and an end-of-block."""

from __future__ import annotations

import random
import struct

# One character per 8x8 block: background, hair, face, shirt.
PORTRAIT = """\
............
............
....hhhh....
...hhhhhh...
...hffffh...
...ffffff...
...ffffff...
....ffff....
.....ff.....
...ssssss...
..ssssssss..
.ssssssssss.
.ssssssssss.
ssssssssssss
ssssssssssss"""
BACKGROUNDS = [(214, 228, 240), (236, 236, 236), (200, 220, 205), (245, 240, 225)]
HAIR = [(40, 30, 25), (90, 60, 40), (20, 20, 20), (150, 110, 70)]
SKIN = [(241, 205, 180), (224, 184, 150), (198, 150, 115), (160, 115, 85)]
SHIRTS = [(40, 60, 110), (120, 30, 40), (60, 90, 60), (80, 80, 90), (230, 230, 235)]

# The standard luminance DC table (ITU T.81 Annex K.3): code counts per length, then symbols.
DC_BITS = (0, 1, 5, 1, 1, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0)
DC_SYMBOLS = tuple(range(12))
# An AC table with one symbol: end-of-block (0x00), coded as the single bit 0.
AC_BITS = (1,) + (0,) * 15
AC_SYMBOLS = (0,)
DC_QUANT = 8  # a flat block of level v has DC coefficient 8 (v - 128): quantised, v - 128


def _codes(bits: tuple[int, ...], symbols: tuple[int, ...]) -> dict[int, tuple[int, int]]:
    """symbol -> (code, length) of a canonical Huffman table (T.81 Annex C)."""
    table, code, index = {}, 0, 0
    for length, count in enumerate(bits, start=1):
        for _ in range(count):
            table[symbols[index]] = (code, length)
            code, index = code + 1, index + 1
        code <<= 1
    return table


class _Bits:
    """Entropy-coded bytes: bits packed most significant first, 0xFF stuffed with 0x00."""

    def __init__(self) -> None:
        self.out = bytearray()
        self.acc, self.count = 0, 0

    def put(self, value: int, length: int) -> None:
        for shift in range(length - 1, -1, -1):
            self.acc = (self.acc << 1) | ((value >> shift) & 1)
            self.count += 1
            if self.count == 8:
                self.out.append(self.acc)
                if self.acc == 0xFF:
                    self.out.append(0)
                self.acc, self.count = 0, 0

    def finish(self) -> bytes:
        if self.count:
            self.put((1 << (8 - self.count)) - 1, 8 - self.count)  # pad with one-bits
        return bytes(self.out)


def _ycbcr(rgb: tuple[int, int, int]) -> tuple[int, int, int]:
    r, g, b = rgb
    values = (0.299 * r + 0.587 * g + 0.114 * b,
              128 - 0.168736 * r - 0.331264 * g + 0.5 * b,
              128 + 0.5 * r - 0.418688 * g - 0.081312 * b)
    return tuple(min(255, max(0, round(v))) for v in values)  # type: ignore[return-value]


def _segment(marker: int, payload: bytes) -> bytes:
    return struct.pack(">HH", marker, len(payload) + 2) + payload


def encode(blocks: list[list[tuple[int, int, int]]]) -> bytes:
    """A baseline JFIF JPEG (4:4:4, one flat colour per 8x8 block) of `blocks` rows of RGB."""
    height, width = 8 * len(blocks), 8 * len(blocks[0])
    dc, ac = _codes(DC_BITS, DC_SYMBOLS), _codes(AC_BITS, AC_SYMBOLS)
    bits, previous = _Bits(), [0, 0, 0]
    for row in blocks:
        for rgb in row:
            for c, level in enumerate(_ycbcr(rgb)):
                diff, previous[c] = level - 128 - previous[c], level - 128
                size = abs(diff).bit_length()
                bits.put(*dc[size])
                bits.put(diff if diff >= 0 else diff + (1 << size) - 1, size)
                bits.put(*ac[0])
    tables = b"".join(bytes([cls << 4]) + bytes(counts) + bytes(symbols)
                      for cls, counts, symbols in ((0, DC_BITS, DC_SYMBOLS), (1, AC_BITS, AC_SYMBOLS)))
    components = b"".join(bytes([c, 0x11, 0]) for c in (1, 2, 3))
    return b"".join([
        b"\xff\xd8",
        _segment(0xFFE0, b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"),
        _segment(0xFFDB, bytes([0]) + bytes([DC_QUANT] * 64)),
        _segment(0xFFC0, struct.pack(">BHHB", 8, height, width, 3) + components),
        _segment(0xFFC4, tables),
        _segment(0xFFDA, bytes([3, 1, 0x00, 2, 0x00, 3, 0x00, 0, 63, 0])),
        bits.finish(),
        b"\xff\xd9",
    ])


def portrait(rng: random.Random) -> bytes:
    """The student's photo: a head-and-shoulders silhouette in colours drawn from `rng`."""
    colours = {".": rng.choice(BACKGROUNDS), "h": rng.choice(HAIR), "f": rng.choice(SKIN),
               "s": rng.choice(SHIRTS)}
    return encode([[colours[ch] for ch in line] for line in PORTRAIT.splitlines()])
