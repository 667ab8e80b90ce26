"""CSV loads into BigQuery tables (all rows or none; a bad value names its row and column) and
table exports as CSV or newline-delimited JSON."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from decimal import Decimal, InvalidOperation
from typing import Any

from mock_servers.core.errors import Code, ToolFailure, invalid
from mock_servers.google_cloud import bq_types
from mock_servers.sqlfront import convert as conversions
from mock_servers.sqlfront.dialect import BIGQUERY, Dialect
from mock_servers.sqlfront.types import TEXT

_TRUE, _FALSE = {"true", "t", "1", "yes", "y"}, {"false", "f", "0", "no", "n"}


def _int(text: str) -> int:
    return int(text)


def _numeric(text: str) -> float:
    number = Decimal(text)
    if not number.is_finite():
        raise ValueError(text)
    return float(number)


def _float(text: str) -> float:
    return float(text)


def _bool(text: str) -> int:
    low = text.lower()
    if low not in _TRUE | _FALSE:
        raise ValueError(text)
    return int(low in _TRUE)


def _moment(kind: str) -> Callable[[str], Any]:
    """The reader of a DATE, DATETIME or TIMESTAMP text, as a cast reads it (zones included)."""
    target = bq_types.named(kind)

    def read(text: str) -> Any:
        try:
            return conversions.convert(text, TEXT, target, _BIGQUERY)
        except conversions.Unconvertible:
            raise ValueError(text) from None
    return read


_BIGQUERY = Dialect(BIGQUERY)
PARSERS = {"INT64": _int, "NUMERIC": _numeric, "BIGNUMERIC": _numeric, "FLOAT64": _float, "BOOL": _bool,
           "DATE": _moment("DATE"), "TIMESTAMP": _moment("TIMESTAMP"), "DATETIME": _moment("DATETIME")}


def read_csv(data: bytes, skip_header: bool) -> tuple[list[str] | None, list[list[str]]]:
    """The header (byte-order mark removed) and the records of a CSV file."""
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise invalid("the CSV file is not UTF-8 text") from None
    try:
        records = list(csv.reader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        raise invalid(f"the CSV file cannot be read: {exc}") from None
    records = [r for r in records if r]
    if skip_header and records:
        return [h.replace("\ufeff", "").strip() for h in records[0]], records[1:]
    return None, records


def _guess(values: list[str]) -> str:
    present = [v for v in values if v != ""]
    for kind in ("INT64", "FLOAT64", "BOOL", "DATE", "TIMESTAMP"):
        try:
            for value in present:
                PARSERS[kind](value)
        except (ValueError, InvalidOperation):
            continue
        if present and not (kind == "BOOL" and all(v in ("0", "1") for v in present)):
            return kind
    return "STRING"


def infer_schema(header: list[str] | None, records: list[list[str]]) -> list[dict[str, Any]]:
    """Column names (header, else string_field_<n>) and types detected from the values."""
    width = len(header) if header is not None else max((len(r) for r in records), default=0)
    if width == 0:
        raise invalid("the CSV file has no columns: give a table with a schema or a header row")
    names = header or [f"string_field_{i}" for i in range(width)]
    return [{"name": n, "type": _guess([r[i] for r in records if i < len(r)]), "mode": "NULLABLE",
             "description": ""} for i, n in enumerate(names)]


def convert(records: list[list[str]], schema: list[dict[str, Any]], first_line: int) -> list[list[Any]]:
    """Every record as stored values; the first bad one is INVALID_ARGUMENT naming its line and column."""
    out = []
    for number, record in enumerate(records, first_line):
        if len(record) != len(schema):
            raise invalid(f"row {number}: {len(record)} values, the table has {len(schema)} columns")
        row = []
        for value, field in zip(record, schema):
            row.append(_value(value, field, number))
        out.append(row)
    return out


def _value(text: str, field: dict[str, Any], number: int) -> Any:
    if text == "":
        if field["mode"] == "REQUIRED":
            raise invalid(f"row {number}, column {field['name']}: a value is required")
        return None
    parser = PARSERS.get(field["type"])
    if parser is None:
        return text
    try:
        return parser(text.strip())
    except (ValueError, InvalidOperation):
        raise invalid(f"row {number}, column {field['name']}: '{text[:100]}' is not a valid "
                      f"{field['type']}") from None


def export(columns: list[str], rows: list[list[Any]], file_format: str) -> bytes:
    """Rows (as shown) as CSV with a header, or as one JSON object per line."""
    if file_format == "NEWLINE_DELIMITED_JSON":
        lines = [json.dumps(dict(zip(columns, row)), ensure_ascii=False, separators=(",", ":")) for row in rows]
        return "".join(line + "\n" for line in lines).encode()
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(columns)
    for row in rows:
        writer.writerow(["true" if v is True else "false" if v is False else "" if v is None else v for v in row])
    return buffer.getvalue().encode()


def refuse_nonempty(rows: int, table: str) -> None:
    if rows:
        raise ToolFailure(Code.FAILED_PRECONDITION, f"Already Exists: table {table} is not empty (WRITE_EMPTY)",
                          hint="use WRITE_APPEND or WRITE_TRUNCATE")
