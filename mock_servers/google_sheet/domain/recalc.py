"""Recalculation: after every write, each formula of the spreadsheet is evaluated again in
dependency order (cells in a circular reference get #REF!). The work is bounded: the cells
loaded, the dependency edges and the cells the formulas read together stay within
`RECALC_CELLS`, else the write is refused (RESOURCE_EXHAUSTED)."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections import defaultdict, deque

from sqlmodel import Session

from mock_servers.core import sql
from mock_servers.core.errors import Code, ToolFailure
from mock_servers.core.formulas import Evaluator, FormulaSyntaxError, Ref, WorkBudget, parse, references
from mock_servers.core.formulas.evaluate import BudgetExceeded
from mock_servers.core.formulas.parser import Node
from mock_servers.core.formulas.values import ERROR, REF, Scalar
from mock_servers.google_sheet.domain.book import Sheet, sheets
from mock_servers.google_sheet.domain.values import loaded, stored

RECALC_CELLS = 5_000_000
Key = tuple[int, int, int]  # sheet row key, row, col


class SpreadsheetBook:
    """The formula engine's view of one spreadsheet: each sheet's cells loaded on first use."""

    def __init__(self, session: Session, spreadsheet: int, budget: WorkBudget) -> None:
        self.session = session
        self.budget = budget
        self.by_title = {s.title.casefold(): s for s in sheets(session, spreadsheet)}
        self.grids: dict[int, dict[tuple[int, int], Scalar]] = {}
        self.current: Sheet | None = None

    def resolve(self, title: str | None) -> Sheet | None:
        return self.current if title is None else self.by_title.get(title.casefold())

    def grid(self, pk: int) -> dict[tuple[int, int], Scalar]:
        if pk not in self.grids:
            rows = sql.run(self.session, "SELECT row, col, value, value_type FROM gs_cell WHERE sheet = ?", (pk,))
            self.grids[pk] = {(r, c): loaded(v, t) for r, c, v, t in rows}
            self.budget.spend(len(self.grids[pk]))
        return self.grids[pk]

    def size(self, sheet: str | None) -> tuple[int, int] | None:
        found = self.resolve(sheet)
        return None if found is None else (found.row_count, found.column_count)

    def value(self, sheet: str | None, row: int, col: int) -> Scalar:
        found = self.resolve(sheet)
        return None if found is None else self.grid(found.pk).get((row, col))


def _parsed(formula: str) -> Node | None:
    try:
        return parse(formula)
    except FormulaSyntaxError:
        return None


class _Graph:
    """Formula cells and the formula cells each one reads."""

    def __init__(self, book: SpreadsheetBook, formulas: dict[Key, Node | None], budget: WorkBudget) -> None:
        self.book = book
        self.budget = budget
        by_sheet: dict[int, dict[int, list[int]]] = defaultdict(lambda: defaultdict(list))
        for pk, row, col in sorted(formulas):
            by_sheet[pk][col].append(row)
        self.columns = {pk: (sorted(cols), cols) for pk, cols in by_sheet.items()}
        self.readers: dict[Key, list[Key]] = defaultdict(list)
        self.waiting = dict.fromkeys(formulas, 0)
        owners = {s.pk: s for s in book.by_title.values()}
        for key, node in formulas.items():
            for ref in references(node) if node is not None else ():
                book.current = owners[key[0]]
                self.link(key, ref)

    def link(self, reader: Key, ref: Ref) -> None:
        target = self.book.resolve(ref.sheet)
        if target is None or target.pk not in self.columns:
            return
        r1, c1, r2, c2 = ref.bounds
        r2 = target.row_count - 1 if r2 is None else r2
        c2 = target.column_count - 1 if c2 is None else c2
        cols, rows_of = self.columns[target.pk]
        for col in cols[bisect_left(cols, c1):bisect_right(cols, c2)]:
            rows = rows_of[col]
            hits = rows[bisect_left(rows, r1):bisect_right(rows, r2)]
            self.budget.spend(len(hits) + 1)
            for row in hits:
                self.readers[(target.pk, row, col)].append(reader)
                self.waiting[reader] += 1

    def order(self) -> tuple[list[Key], list[Key]]:
        """The formula cells in an order that evaluates each after those it reads, and the
        cells left over (in or behind a circular reference)."""
        ready = deque(sorted(k for k, n in self.waiting.items() if n == 0))
        done: list[Key] = []
        while ready:
            key = ready.popleft()
            done.append(key)
            for reader in self.readers.get(key, ()):
                self.waiting[reader] -= 1
                if self.waiting[reader] == 0:
                    ready.append(reader)
        placed = set(done)
        return done, sorted(k for k in self.waiting if k not in placed)


def recalculate(session: Session, spreadsheet: int, today: float) -> int:
    """Evaluate every formula of the spreadsheet again and store the values that changed;
    returns how many formula cells there are."""
    found = sql.run(session, "SELECT c.sheet, c.row, c.col, c.formula, c.value, c.value_type FROM gs_cell c "
                    "JOIN gs_sheet s ON s.pk = c.sheet WHERE s.spreadsheet = ? AND c.formula IS NOT NULL",
                    (spreadsheet,)).fetchall()
    if not found:
        return 0
    budget = WorkBudget(RECALC_CELLS)
    try:
        _evaluate_all(session, spreadsheet, found, today, budget)
    except BudgetExceeded as exc:
        raise ToolFailure(Code.RESOURCE_EXHAUSTED, f"the spreadsheet's formulas are too costly to recalculate: {exc}",
                          hint="use smaller ranges in formulas or fewer formulas") from None
    return len(found)


def _evaluate_all(session: Session, spreadsheet: int, found: list[tuple[int, int, int, str, str | None, str]],
                  today: float, budget: WorkBudget) -> None:
    book = SpreadsheetBook(session, spreadsheet, budget)
    before = {(pk, r, c): (v, t) for pk, r, c, _f, v, t in found}
    formulas = {(pk, r, c): _parsed(f) for pk, r, c, f, _v, _t in found}
    graph = _Graph(book, formulas, budget)
    ordered, cyclic = graph.order()
    owners = {s.pk: s for s in book.by_title.values()}
    evaluator = Evaluator(book, today, budget)
    results: dict[Key, Scalar] = {}
    for key in ordered:
        node = formulas[key]
        book.current = owners[key[0]]
        results[key] = ERROR if node is None else evaluator.evaluate(node)
        book.grid(key[0])[(key[1], key[2])] = results[key]
    for key in cyclic:
        results[key] = REF
    changed = []
    for key, value in results.items():
        data, kind = stored(value)
        if (data, kind) != before[key]:
            changed.append((data, kind, *key))
    if changed:
        sql.cursor(session).executemany(
            "UPDATE gs_cell SET value = ?, value_type = ? WHERE sheet = ? AND row = ? AND col = ?", changed)
