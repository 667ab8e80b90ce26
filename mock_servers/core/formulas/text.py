"""Text functions: CONCATENATE TEXT LEN LEFT RIGHT MID TRIM UPPER LOWER."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from mock_servers.core.formulas.registry import MANY, check, register
from mock_servers.core.formulas.values import VALUE, Block, FormulaError, Value, number, serial_date, text

if TYPE_CHECKING:
    from mock_servers.core.formulas.evaluate import Evaluator

MAX_TEXT = 50_000  # characters a text function may build


def _bounded(result: str) -> str:
    if len(result) > MAX_TEXT:
        raise VALUE
    return result


@register("CONCATENATE", 1, MANY)
def _concatenate(ev: Evaluator, args: list[Value]) -> Value:
    parts = []
    for arg in args:
        for cell in arg.flat() if isinstance(arg, Block) else [arg]:
            if isinstance(cell, FormulaError):
                raise cell
            parts.append(text(cell))
    return _bounded("".join(parts))


@register("LEN", 1, 1)
def _len(ev: Evaluator, args: list[Value]) -> Value:
    return float(len(text(check(args[0]))))


def _count(args: list[Value], at: int, default: int) -> int:
    count = int(number(check(args[at]))) if len(args) > at and args[at] is not None else default
    if count < 0:
        raise VALUE
    return count


@register("LEFT", 1, 2)
def _left(ev: Evaluator, args: list[Value]) -> Value:
    return text(check(args[0]))[:_count(args, 1, 1)]


@register("RIGHT", 1, 2)
def _right(ev: Evaluator, args: list[Value]) -> Value:
    count = _count(args, 1, 1)
    value = text(check(args[0]))
    return value[len(value) - count:] if count else ""


@register("MID", 3, 3)
def _mid(ev: Evaluator, args: list[Value]) -> Value:
    start = int(number(check(args[1])))
    if start < 1:
        raise VALUE
    return text(check(args[0]))[start - 1:start - 1 + _count(args, 2, 0)]


@register("TRIM", 1, 1)
def _trim(ev: Evaluator, args: list[Value]) -> Value:
    return re.sub(r" +", " ", text(check(args[0]))).strip(" ")


@register("UPPER", 1, 1)
def _upper(ev: Evaluator, args: list[Value]) -> Value:
    return text(check(args[0])).upper()


@register("LOWER", 1, 1)
def _lower(ev: Evaluator, args: list[Value]) -> Value:
    return text(check(args[0])).lower()


_DATE_PARTS = re.compile(r"yyyy|yy|mmmm|mmm|mm|m|dddd|ddd|dd|d", re.I)
_MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August",
           "September", "October", "November", "December"]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def _date_text(serial: float, pattern: str) -> str:
    day = serial_date(serial)

    def part(found: re.Match[str]) -> str:
        token = found.group().lower()
        return {"yyyy": f"{day.year:04d}", "yy": f"{day.year % 100:02d}",
                "mmmm": _MONTHS[day.month - 1], "mmm": _MONTHS[day.month - 1][:3],
                "mm": f"{day.month:02d}", "m": str(day.month),
                "dddd": _DAYS[day.weekday()], "ddd": _DAYS[day.weekday()][:3],
                "dd": f"{day.day:02d}", "d": str(day.day)}[token]
    return _DATE_PARTS.sub(part, pattern)


_NUMBER_FORMAT = re.compile(r"(?P<pre>[^#0,.%]*)(?P<int>[#0,]*0|[#,]*#)(?:\.(?P<dec>[0#]+))?"
                            r"(?P<pct>%?)(?P<post>[^#0%]*)")


def _number_text(value: float, pattern: str) -> str:
    found = _NUMBER_FORMAT.fullmatch(pattern)
    if found is None:
        raise VALUE
    if found.group("pct"):
        value *= 100
    decimals = len(found.group("dec") or "")
    grouped = "," in found.group("int")
    body = f"{abs(value):{',' if grouped else ''}.{decimals}f}"
    if found.group("dec") and "#" in found.group("dec"):
        body = body.rstrip("0").rstrip(".")
    whole, dot, fraction = body.partition(".")
    if not grouped:  # "000" shows at least three digits
        body = whole.zfill(found.group("int").count("0")) + dot + fraction
    sign = "-" if value < 0 and float(body.replace(",", "") or 0) != 0 else ""
    return f"{sign}{found.group('pre')}{body}{found.group('pct')}{found.group('post')}"


# A date pattern: day, month and year parts between separators; no times (h, s, AM/PM).
_DATE_FORMAT = re.compile(r"(?:yyyy|yy|mmmm|mmm|mm|m|dddd|ddd|dd|d|[ ,./\-])+", re.I)


def text_format_kind(pattern: str) -> str | None:
    """"date" or "number" for a TEXT pattern this engine formats as a spreadsheet program does,
    None for any other (times, colours, conditions, sections): TEXT is #VALUE! then."""
    if _DATE_FORMAT.fullmatch(pattern) and _DATE_PARTS.search(pattern):
        return "date"
    if _NUMBER_FORMAT.fullmatch(pattern) and not re.search(r"[\[\];\"]", pattern):
        return "number"
    return None


@register("TEXT", 2, 2)
def _text(ev: Evaluator, args: list[Value]) -> Value:
    value, pattern = check(args[0]), text(check(args[1]))
    if isinstance(value, str):
        return value
    amount = number(value)
    kind = text_format_kind(pattern)
    if kind is None:
        raise VALUE
    return _date_text(amount, pattern) if kind == "date" else _number_text(amount, pattern)
