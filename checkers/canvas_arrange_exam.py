"""Checker of canvas_arrange_exam: the exam sheet against ground truth, plus no side effects."""

from __future__ import annotations

from datetime import date, time

from checkers.kit import Checks, Context, header, judged, keys, read_table, values
from checkers.normalize import S, Si, as_date, as_time, is_tbd
from checkers.side_effects import no_side_effects
from checkers.verdict import CheckFailed
from envs.canvas_arrange_exam import SCHEDULE, TASK

DATE, TIME, KIND = "Final Date (MM/DD/YYYY)", "Start Time (HH:MM)", "Open-book/Closed-book"


def _same_kind(got: object, want: object) -> bool:
    """Exam type: `Si`, hyphen and space interchangeable."""
    return Si(got).replace("-", " ") == Si(want).replace("-", " ")


def order(ctx: Context) -> str:
    """Dated rows strictly ascending by (date, time); TBD-date rows after them by Course Code."""
    records = read_table(ctx, SCHEDULE).records(SCHEDULE)
    previous: tuple[date, time] | None = None
    tbd_codes: list[str] = []
    for i, rec in enumerate(records):
        code = S(rec["Course Code"])
        if is_tbd(rec[DATE]):
            tbd_codes.append(code)
            continue
        day, start = as_date(rec[DATE]), as_time(rec[TIME])
        if day is None or start is None:
            raise CheckFailed(f"row {i + 2} has an unreadable date/time {rec[DATE]!r} {rec[TIME]!r}")
        if tbd_codes:
            raise CheckFailed(f"dated row {code} comes after a TBD row")
        if previous is not None and not previous < (day, start):
            raise CheckFailed(f"row {code} is not after the row before it by date and time")
        previous = (day, start)
    if tbd_codes != sorted(tbd_codes):
        raise CheckFailed(f"TBD rows are not ordered by Course Code: {tbd_codes}")
    judged(len(records), len(ctx.answer(SCHEDULE.file)), "rows")
    return "dated rows ascend by date and time; TBD rows last by Course Code"


CHECKS = Checks(
    TASK,
    file_header=header(SCHEDULE),
    row_keys=keys(SCHEDULE),
    values=values(SCHEDULE, compare={KIND: _same_kind}, tbd=True),
    order=order,
    no_side_effects=no_side_effects(TASK),
)
