"""Checker of canvas_arrange_exam: the exam sheet against ground truth, plus no side effects."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from datetime import date, time
from typing import Any

from openpyxl import load_workbook

from checkers.normalize import E, I, S, Si, as_date, as_time, is_tbd
from checkers.verdict import CheckFailed, Verdict, run_check
from loca.core.world import World
from mock_servers import snapshot_ignore
from mock_servers.core import snapshot

KEY = "Course Code"
DATE = "Final Date (MM/DD/YYYY)"
TIME = "Start Time (HH:MM)"
EMAIL = "Proctor Email"
TYPE = "Open-book/Closed-book"
INTEGERS = ("Duration (minutes)", "Course Credit")


def _sheet_rows(world: World, truth: dict[str, Any]) -> tuple[list[Any], list[list[Any]]]:
    path = world.workspace / truth["file"]
    if not path.is_file():
        raise CheckFailed(f"{truth['file']} is missing from the workspace")
    try:
        wb = load_workbook(path, data_only=True, read_only=True)
    except Exception as exc:
        raise CheckFailed(f"{truth['file']} cannot be opened as a workbook: {exc}") from None
    try:
        rows = [list(r) for r in wb.worksheets[0].iter_rows(values_only=True)]
    finally:
        wb.close()
    if not rows:
        return [], []
    body = [r for r in rows[1:] if any(v is not None and S(v) != "" for v in r)]
    return rows[0], body


def _record(headers: list[str], row: list[Any]) -> dict[str, Any]:
    return {h: (row[i] if i < len(row) else None) for i, h in enumerate(headers)}


def _cell_ok(column: str, got: Any, want: Any) -> bool:
    if is_tbd(want):
        return is_tbd(got)
    if is_tbd(got):
        return False
    if column == DATE:
        return as_date(got) == as_date(want)
    if column == TIME:
        return as_time(got) is not None and as_time(got) == as_time(want)
    if column in INTEGERS:
        return I(got) is not None and I(got) == I(want)
    if column == EMAIL:
        return E(got) == E(want)
    if column == TYPE:
        return Si(got).replace("-", " ") == Si(want).replace("-", " ")
    return Si(got) == Si(want)


def _sort_key(rec: dict[str, Any]) -> tuple[date, time] | None:
    day, start = as_date(rec[DATE]), as_time(rec[TIME])
    return (day, start) if day and start else None


def check(world: World) -> Verdict:
    truth = world.read_truth()
    headers: list[str] = truth["headers"]
    expected = {r[KEY]: r for r in truth["rows"]}
    state: dict[str, Any] = {}

    def file_header() -> str:
        got_headers, body = _sheet_rows(world, truth)
        state["records"] = [_record(headers, r) for r in body]
        got = [S(h) for h in got_headers[: len(headers)]]
        extra = [S(h) for h in got_headers[len(headers):] if S(h)]
        if got != headers or extra:
            raise CheckFailed(f"header row is {got + extra}, expected {headers}")
        return f"{truth['file']} has the {len(headers)} headers"

    def row_keys() -> str:
        records = _records(state)
        keys = [S(r[KEY]) for r in records]
        counts = Counter(keys)
        dupes = sorted(k for k, n in counts.items() if n > 1)
        missing = sorted(set(expected) - set(keys))
        extra = sorted(set(keys) - set(expected))
        if dupes or missing or extra:
            raise CheckFailed(f"missing {missing}, extra {extra}, duplicated {dupes}")
        return f"{len(keys)} rows, one per expected course"

    def values() -> str:
        wrong = []
        for rec in _records(state):
            want = expected.get(S(rec[KEY]))
            if want is None:
                continue
            for column in headers:
                if not _cell_ok(column, rec[column], want[column]):
                    wrong.append(f"{S(rec[KEY])}/{column}: got {rec[column]!r}, expected {want[column]!r}")
        if wrong:
            shown = "; ".join(wrong[:5])
            raise CheckFailed(f"{len(wrong)} wrong cells: {shown}" + (" ..." if len(wrong) > 5 else ""))
        matched = sum(1 for r in _records(state) if S(r[KEY]) in expected)
        return f"all cells of {matched} matched rows are right"

    def order() -> str:
        records = _records(state)
        keys = [_sort_key(r) for r in records]
        seen_tbd = False
        for i, (rec, key) in enumerate(zip(records, keys, strict=True)):
            if key is None:
                if not is_tbd(rec[DATE]):
                    raise CheckFailed(f"row {i + 2} has an unreadable date/time {rec[DATE]!r} {rec[TIME]!r}")
                seen_tbd = True
                continue
            if seen_tbd:
                raise CheckFailed(f"dated row {S(rec[KEY])} comes after a TBD row")
            if i and keys[i - 1] is not None and not keys[i - 1] < key:  # type: ignore[operator]
                raise CheckFailed(f"row {S(rec[KEY])} is not after {S(records[i - 1][KEY])} by date and time")
        tbd_codes = [S(r[KEY]) for r, k in zip(records, keys, strict=True) if k is None]
        if tbd_codes != sorted(tbd_codes):
            raise CheckFailed(f"TBD rows are not ordered by Course Code: {tbd_codes}")
        return "dated rows ascend by date and time; TBD rows last by Course Code"

    def no_side_effects() -> str:
        before = snapshot.Snapshot.model_validate(world.read_truth("snapshot.json"))
        problems = snapshot.changes(world, before, snapshot_ignore(list(truth["servers"])),
                                    exclude_files=truth["writable"])
        if problems:
            raise CheckFailed("; ".join(problems))
        return "Canvas, mailbox and other workspace files unchanged"

    checks: list[tuple[str, Callable[[], str]]] = [
        ("file_header", file_header), ("row_keys", row_keys), ("values", values),
        ("order", order), ("no_side_effects", no_side_effects)]
    return Verdict.of([run_check(name, body) for name, body in checks])


def _records(state: dict[str, Any]) -> list[dict[str, Any]]:
    if "records" not in state:
        raise CheckFailed("the sheet could not be read (see file_header)")
    return state["records"]
