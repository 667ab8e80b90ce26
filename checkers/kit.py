"""Checks declared as data. A task's checker is a `Checks` of named check functions, most of
them made by the factories here from the task's typed output specifications:

    CHECKS = Checks(TASK, file_header=header(SHEET), row_keys=keys(SHEET), values=values(SHEET),
                    order=order_as_truth(SHEET), no_side_effects=no_side_effects(TASK))

A check function takes the `Context` (the world, its ground truth, memoised reads of the agent's
output) and returns a short success detail, or raises `CheckFailed` with the reason. Ground truth
is `truth/truth.json`, whose `answer` holds, per output, what the agent must produce: for a
`TableFile`, `answer[file]` is the list of expected rows (dicts by header), in the required order."""

from __future__ import annotations

import csv
import io
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cached_property, partial
from typing import Any

from openpyxl import load_workbook

from checkers.normalize import COMPARE, S, is_tbd
from checkers.verdict import CheckFailed, Verdict, run_check
from loca.core.outputs import TableFile
from loca.core.task import TaskSpec
from loca.core.world import World

CheckFn = Callable[["Context"], str]
Compare = Callable[[Any, Any], bool]
SHOWN = 5  # wrong items quoted in a failure detail


class Context:
    """What every check of one grading sees."""

    def __init__(self, world: World) -> None:
        self.world = world
        self._memo: dict[Any, Any] = {}

    @cached_property
    def truth(self) -> dict[str, Any]:
        truth: dict[str, Any] = self.world.read_truth()
        return truth

    def answer(self, key: str) -> Any:
        """The expected answer for one output (a file name, "mail", "events", ...)."""
        return self.truth["answer"][key]

    def memo(self, key: Any, read: Callable[[], Any]) -> Any:
        """`read()` once per grading; a failure is remembered and raised again."""
        if key not in self._memo:
            try:
                self._memo[key] = (True, read())
            except CheckFailed as exc:
                self._memo[key] = (False, exc)
        ok, value = self._memo[key]
        if not ok:
            raise CheckFailed(f"{value} (see the first failed check)")
        return value


@dataclass(frozen=True)
class Checks:
    """A task's named checks, run in order; success means every one passed."""

    spec: TaskSpec
    checks: tuple[tuple[str, CheckFn], ...]

    def __init__(self, spec: TaskSpec, **named: CheckFn) -> None:
        object.__setattr__(self, "spec", spec)
        object.__setattr__(self, "checks", tuple(named.items()))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.checks)

    def run(self, world: World) -> Verdict:
        ctx = Context(world)
        return Verdict.of([run_check(name, partial(fn, ctx)) for name, fn in self.checks])


# ---------------------------------------------------------------- tables in files

@dataclass(frozen=True)
class AgentTable:
    """The agent's table as found: its header cells and its non-empty data rows (lists)."""

    headers: list[Any]
    rows: list[list[Any]]

    def records(self, out: TableFile) -> list[dict[str, Any]]:
        """Data rows as dicts by the expected headers, by position."""
        return [{h: (r[i] if i < len(r) else None) for i, h in enumerate(out.headers)} for r in self.rows]


def _blank(value: Any) -> bool:
    return value is None or S(value) == ""


def _read_xlsx(data: bytes, out: TableFile) -> list[list[Any]]:
    try:
        wb = load_workbook(io.BytesIO(data), data_only=True, read_only=True)
    except Exception as exc:
        raise CheckFailed(f"{out.file} cannot be opened as a workbook: {type(exc).__name__}") from None
    try:
        if out.sheet is None:
            ws = wb.worksheets[0]
        elif out.sheet in wb.sheetnames:
            ws = wb[out.sheet]
        else:
            raise CheckFailed(f"{out.file} has no sheet {out.sheet!r} (sheets: {wb.sheetnames})")
        return [list(r) for r in ws.iter_rows(values_only=True)]
    finally:
        wb.close()


def _read_csv(data: bytes, out: TableFile) -> list[list[Any]]:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise CheckFailed(f"{out.file} is not UTF-8 text") from None
    try:
        return [row for row in csv.reader(io.StringIO(text, newline=""))]
    except csv.Error as exc:
        raise CheckFailed(f"{out.file} is not valid CSV: {exc}") from None


def read_table(ctx: Context, out: TableFile) -> AgentTable:
    """The agent's table in `out.file` (memoised); CheckFailed when missing or unreadable."""

    def read() -> AgentTable:
        path = ctx.world.workspace / out.file
        if not path.is_file():
            raise CheckFailed(f"{out.file} is missing from the workspace")
        data = path.read_bytes()
        rows = _read_xlsx(data, out) if out.kind == "xlsx" else _read_csv(data, out)
        if not rows:
            return AgentTable([], [])
        body = [r for r in rows[1:] if not all(_blank(v) for v in r)]
        return AgentTable(rows[0], body)

    table: AgentTable = ctx.memo(("table", out.file, out.sheet), read)
    return table


def header(out: TableFile) -> CheckFn:
    """The first row equals the expected headers (`S`, in order), nothing after them."""

    def check(ctx: Context) -> str:
        got = read_table(ctx, out).headers
        shown = [S(h) for h in got[: len(out.headers)]]
        extra = [S(h) for h in got[len(out.headers):] if not _blank(h)]
        if shown != out.headers or extra:
            raise CheckFailed(f"{out.file}: header row is {shown + extra}, expected {out.headers}")
        return f"{out.file} has the {len(out.headers)} expected headers"

    return check


def _key(record: Mapping[str, Any], out: TableFile) -> tuple[str, ...]:
    return tuple(S(record[k]) for k in out.key)


def _show(keys: list[tuple[str, ...]]) -> str:
    items = [k[0] if len(k) == 1 else k for k in keys[:SHOWN]]
    return f"{items}{' ...' if len(keys) > SHOWN else ''} ({len(keys)})"


def keys(out: TableFile, key: str | None = None) -> CheckFn:
    """The data rows' keys equal the expected key set: none missing, none extra, no duplicate
    (precision and recall, matched one to one). `key`: the answer entry (default `out.file`)."""

    def check(ctx: Context) -> str:
        got = [_key(r, out) for r in read_table(ctx, out).records(out)]
        problems = set_problems(got, {_key(r, out) for r in ctx.answer(key or out.file)})
        if problems:
            raise CheckFailed(f"{out.file}: " + "; ".join(problems))
        return f"{out.file}: {len(got)} rows, one per expected key"

    return check


def set_problems(got: list[tuple[str, ...]], want: set[tuple[str, ...]]) -> list[str]:
    """What keeps the keys `got` from being exactly `want`, once each: missing, extra and
    duplicated keys (none: they are)."""
    dupes = sorted(k for k, n in Counter(got).items() if n > 1)
    missing, extra = sorted(want - set(got)), sorted(set(got) - want)
    return [f"{what} {_show(items)}" for what, items in
            (("missing", missing), ("extra", extra), ("duplicated", dupes)) if items]


def cell_equal(norm: str, got: Any, want: Any, tbd: bool = False) -> bool:
    """`got` matches `want` under the normalisation `norm`; with `tbd`, a `TBD` expectation
    needs `TBD` and only there."""
    if tbd and (is_tbd(want) or is_tbd(got)):
        return is_tbd(want) and is_tbd(got)
    return COMPARE[norm](got, want)


def values(out: TableFile, key: str | None = None, compare: Mapping[str, Compare] | None = None,
           tbd: bool = False) -> CheckFn:
    """Every cell of every matched row equals the expected one under its column's normalisation
    (or `compare[column]`); `tbd` as in `cell_equal`. Unmatched rows are `keys`' business."""
    special = dict(compare or {})

    def check(ctx: Context) -> str:
        expected = {_key(r, out): r for r in ctx.answer(key or out.file)}
        wrong, matched = [], 0
        for rec in read_table(ctx, out).records(out):
            want = expected.get(_key(rec, out))
            if want is None:
                continue
            matched += 1
            for col in out.columns:
                got, expected_cell = rec[col.name], want[col.name]
                same = special[col.name](got, expected_cell) if col.name in special else \
                    cell_equal(col.norm, got, expected_cell, tbd)
                if not same:
                    wrong.append(f"{'/'.join(_key(rec, out))}/{col.name}: got {rec[col.name]!r}, "
                                 f"expected {want[col.name]!r}")
        if wrong:
            raise CheckFailed(f"{out.file}: {len(wrong)} wrong cells: {'; '.join(wrong[:SHOWN])}"
                              + (" ..." if len(wrong) > SHOWN else ""))
        judged(matched, len(expected), f"rows of {out.file}")
        return f"{out.file}: every cell of {matched} matched rows is right"

    return check


def order_as_truth(out: TableFile, key: str | None = None) -> CheckFn:
    """The rows come in the expected order (that of the answer)."""

    def check(ctx: Context) -> str:
        got = [_key(r, out) for r in read_table(ctx, out).records(out)]
        want = [_key(r, out) for r in ctx.answer(key or out.file)]
        if got != want:
            first = next((i for i, (g, w) in enumerate(zip(got, want, strict=False)) if g != w),
                         min(len(got), len(want)))
            raise CheckFailed(f"{out.file}: row {first + 2} is {got[first] if first < len(got) else 'missing'}, "
                              f"expected {want[first] if first < len(want) else 'no row'}")
        return f"{out.file}: rows in the required order"

    return check


# ---------------------------------------------------------------- the rest of the world

def judged(count: int, expected: int, what: str) -> None:
    """Fail a check that found none of the `expected` items it judges: a check with nothing to
    look at is not a pass (per-check pass rates would count what was never done)."""
    if count == 0 and expected:
        raise CheckFailed(f"nothing to judge: none of the {expected} expected {what} is there")


def fail_on(problems: list[str]) -> None:
    """Fail the check with the first `SHOWN` of `problems`, if there are any."""
    if problems:
        raise CheckFailed("; ".join(problems[:SHOWN]) + (" ..." if len(problems) > SHOWN else ""))
