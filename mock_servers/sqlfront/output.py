"""Result rows as JSON text, exactly as `core.output.dump_json` writes a list of row objects,
but built column by column: each column's values are encoded by the one encoder of their type
(in C, not value by value through the JSON encoder) and each row is one string format, so no
dict is made per row."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from json.encoder import encode_basestring
from typing import Any

from mock_servers.core.output import dump_json

NULL = "null"
_BOOLEANS = {True: "true", False: "false"}


def _encoded(values: Sequence[Any]) -> list[str]:
    """The JSON texts of a column's values: numbers (with NULLs) in one call of the encoder
    for the whole column, texts by the JSON string encoder, else value by value."""
    kinds = set(map(type, values)) - {type(None)}
    if kinds <= {int, float}:
        return dump_json(values)[1:-1].split(",")
    if kinds == {str}:
        encode: Callable[[Any], str] = encode_basestring
    elif kinds == {bool}:
        encode = _BOOLEANS.__getitem__
    else:
        encode = dump_json
    if None not in values:
        return list(map(encode, values))
    return [NULL if v is None else encode(v) for v in values]


def rows_json(columns: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """`[{column: value, ...}, ...]` of `rows` (by distinct column names), as `dump_json` writes it."""
    if not rows or not columns:
        return dump_json([{} for _ in rows])
    row = "{" + ",".join(dump_json(c).replace("%", "%%") + ":%s" for c in columns) + "}"
    encoded = [_encoded(values) for values in zip(*rows)]
    return "[" + ",".join(map(row.__mod__, zip(*encoded))) + "]"


def envelope_json(envelope: dict[str, Any], key: str, items: str) -> str:
    """`envelope` as `dump_json` writes it, with the JSON text `items` as the value of `key`."""
    return "{" + ",".join(f"{dump_json(k)}:{items if k == key else dump_json(v)}"
                          for k, v in envelope.items()) + "}"
