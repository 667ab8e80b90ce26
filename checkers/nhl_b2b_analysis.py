"""Checker of nhl_b2b_analysis: the new spreadsheet's first tab and the CSV, each against the
expected table (header, team set, counts, order), the two against each other, and nothing else
changed (the schedule spreadsheet keeps its sheets and cells; no other spreadsheet is created).

The spreadsheet the agent created is found by diffing the world against the snapshot frozen at
generation: spreadsheet row keys are never reused, so its key is above the snapshot's last."""

from __future__ import annotations

from typing import Any

from checkers.kit import SHOWN, AgentTable, Checks, Context, cell_equal, read_table, set_problems
from checkers.normalize import S
from checkers.side_effects import no_side_effects
from checkers.verdict import CheckFailed
from envs.nhl_b2b_analysis import CSV, OUTPUT_TITLE, REPORT_HEADERS, TASK
from mock_servers.core import snapshot
from mock_servers.core.db import Database
from mock_servers.google_sheet import domain

COUNTS = REPORT_HEADERS[1:]


def _new_books(ctx: Context) -> list[tuple[str, list[list[Any]], int]]:
    """Every spreadsheet the agent created: (title, the values of its first tab, how many tabs)."""

    def read() -> list[tuple[str, list[list[Any]], int]]:
        before = snapshot.Snapshot.model_validate(ctx.world.read_truth("snapshot.json"))
        known = before.tables["gs_spreadsheet"].max_rowid
        db = Database(ctx.world.state_path, readonly=True)
        try:
            with db.read() as session:
                found = []
                for book in domain.list_spreadsheets(session):
                    if book.pk <= known:
                        continue
                    tabs = domain.sheets(session, book.pk)
                    values = [] if not tabs else domain.values(session, tabs[0], domain.read_box(
                        tabs[0], domain.ref_of(tabs[0], None)))
                    found.append((book.title, values, len(tabs)))
                return sorted(found, key=lambda b: b[0])
        finally:
            db.dispose()

    books: list[tuple[str, list[list[Any]], int]] = ctx.memo(("new_books",), read)
    return books


def _sheet_table(ctx: Context) -> AgentTable:
    """The first tab of the one new spreadsheet titled as asked, as a table."""
    titled = [b for b in _new_books(ctx) if S(b[0]) == OUTPUT_TITLE]
    if len(titled) != 1:
        raise CheckFailed(f"{len(titled)} new spreadsheets titled {OUTPUT_TITLE!r} (see sheet_created)")
    values = titled[0][1]
    if not values:
        return AgentTable([], [])
    body = [r for r in values[1:] if any(S(v) != "" for v in r)]
    return AgentTable(values[0], body)


def _tables(ctx: Context) -> list[tuple[str, AgentTable]]:
    return [(f"sheet {OUTPUT_TITLE}", _sheet_table(ctx)), (CSV.file, read_table(ctx, CSV))]


def sheet_created(ctx: Context) -> str:
    """Exactly one new spreadsheet, titled `nhl_b2b_analysis` (`S`)."""
    books = _new_books(ctx)
    titles = [b[0] for b in books]
    if len(books) != 1 or S(titles[0]) != OUTPUT_TITLE:
        raise CheckFailed(f"new spreadsheets {titles}, expected exactly one titled {OUTPUT_TITLE!r}")
    return f"one new spreadsheet, {OUTPUT_TITLE!r}"


def header(ctx: Context) -> str:
    """The header row is `Team,HA,AH,HH,AA,Total` (`S`) in the sheet's first tab and the CSV."""
    for name, table in _tables(ctx):
        got = [S(h) for h in table.headers]
        while got and got[-1] == "":
            got.pop()
        if got != list(REPORT_HEADERS):
            raise CheckFailed(f"{name}: header row is {got}, expected {list(REPORT_HEADERS)}")
    return "the sheet and the CSV have the expected header"


def _teams(table: AgentTable) -> list[str]:
    return [S(r[0]) if r else "" for r in table.rows]


def team_set(ctx: Context) -> str:
    """One row per team of the schedule in both: none missing, none extra, none twice."""
    want: set[tuple[str, ...]] = {(row["Team"],) for row in ctx.answer(CSV.file)}
    for name, table in _tables(ctx):
        problems = set_problems([(team,) for team in _teams(table)], want)
        if problems:
            raise CheckFailed(f"{name}: " + "; ".join(problems))
    return f"{len(want)} teams, once each, in the sheet and the CSV"


def values(ctx: Context) -> str:
    """Every count of every matched team equals the expected one (`I`), and Total is the sum of
    the four kinds in every row."""
    want = {row["Team"]: row for row in ctx.answer(CSV.file)}
    wrong = []
    for name, table in _tables(ctx):
        for record in table.records(CSV):
            team = S(record["Team"])
            if team not in want:
                continue
            wrong += [f"{name}/{team}/{h}: got {record[h]!r}, expected {want[team][h]}"
                      for h in COUNTS if not cell_equal("I", record[h], want[team][h])]
    if wrong:
        more = " ..." if len(wrong) > SHOWN else ""
        raise CheckFailed(f"{len(wrong)} wrong counts: {'; '.join(wrong[:SHOWN])}{more}")
    return "every count is right in the sheet and the CSV"


def order(ctx: Context) -> str:
    """Rows by Team ascending in both."""
    for name, table in _tables(ctx):
        got = _teams(table)
        if got != sorted(got):
            raise CheckFailed(f"{name}: teams are not in ascending order: {got[:SHOWN]} ...")
    return "rows by Team ascending in the sheet and the CSV"


def csv_equals_sheet(ctx: Context) -> str:
    """The CSV holds the same cells as the sheet's first tab (team names `S`, counts `I`)."""
    sheet, csv = (_normalised(table) for _, table in _tables(ctx))
    if sheet != csv:
        first = next((i for i, (a, b) in enumerate(zip(sheet, csv, strict=False)) if a != b), min(len(sheet), len(csv)))
        raise CheckFailed(f"row {first + 1} differs: sheet {sheet[first] if first < len(sheet) else 'none'}, "
                          f"CSV {csv[first] if first < len(csv) else 'none'}")
    return f"the CSV and the sheet hold the same {len(sheet)} rows"


def _normalised(table: AgentTable) -> list[tuple[str, ...]]:
    rows = [[*table.headers], *table.rows]
    out = []
    for row in rows:
        cells = [S(v) for v in row]
        while cells and cells[-1] == "":
            cells.pop()
        out.append(tuple(_number(c) for c in cells))
    return out


def _number(text: str) -> str:
    try:
        value = float(text)
    except ValueError:
        return text
    return str(int(value)) if value.is_integer() else text


CHECKS = Checks(
    TASK,
    sheet_created=sheet_created,
    header=header,
    team_set=team_set,
    values=values,
    order=order,
    csv_equals_sheet=csv_equals_sheet,
    no_side_effects=no_side_effects(TASK),
)
