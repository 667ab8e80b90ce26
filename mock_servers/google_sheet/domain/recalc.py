"""Recalculation after a write: the formulas that read the changed cells, and those that read
them in turn, are evaluated again in dependency order (after a change of structure or a bulk
build, every formula); cells in a circular reference get #REF!. The work is bounded: the
dependency edges and the cells the formulas read together stay within `RECALC_CELLS`, else the
write is refused (RESOURCE_EXHAUSTED)."""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from collections import defaultdict, deque
from collections.abc import Iterable
from functools import lru_cache

from sqlmodel import Session

from mock_servers.core import sql
from mock_servers.core.errors import Code, ToolFailure
from mock_servers.core.formulas import Evaluator, FormulaSyntaxError, Ref, WorkBudget, parse
from mock_servers.core.formulas.a1 import REF as REF_PATTERN
from mock_servers.core.formulas.a1 import ref_from
from mock_servers.core.formulas.evaluate import BudgetExceeded
from mock_servers.core.formulas.values import ERROR, REF, Scalar
from mock_servers.google_sheet.domain.book import Sheet, sheets
from mock_servers.google_sheet.domain.cells import Box
from mock_servers.google_sheet.domain.values import loaded, stored

RECALC_CELLS = 5_000_000
Key = tuple[int, int, int]  # sheet row key, row, col
_STRINGS = re.compile(r'"(?:[^"]|"")*"')
_VOLATILE = re.compile(r"\bTODAY\s*\(", re.I)


class SpreadsheetBook:
    """The formula engine's view of one spreadsheet, read from the call's transaction (so a
    value stored a moment ago is seen)."""

    def __init__(self, session: Session, by_title: dict[str, Sheet]) -> None:
        self.session = session
        self.by_title = by_title
        self.current: Sheet | None = None

    def resolve(self, title: str | None) -> Sheet | None:
        return self.current if title is None else self.by_title.get(title.casefold())

    def size(self, sheet: str | None) -> tuple[int, int] | None:
        found = self.resolve(sheet)
        return None if found is None else (found.row_count, found.column_count)

    def block(self, sheet: str | None, r1: int, c1: int, r2: int, c2: int) -> list[list[Scalar]]:
        found = self.resolve(sheet)
        rows: list[list[Scalar]] = [[None] * (c2 - c1 + 1) for _ in range(r2 - r1 + 1)]
        if found is not None:
            for r, c, value, kind in sql.run(
                    self.session, "SELECT row, col, value, value_type FROM gs_cell WHERE sheet = ? AND row "
                    "BETWEEN ? AND ? AND col BETWEEN ? AND ?", (found.pk, r1, r2, c1, c2)):
                rows[r - r1][c - c1] = loaded(value, kind)
        return rows


@lru_cache(maxsize=65536)
def references(formula: str) -> tuple[Ref, ...]:
    """The references a formula's text holds (string literals skipped); no full parse."""
    found = []
    for match in REF_PATTERN.finditer(_STRINGS.sub('""', formula)):
        try:
            found.append(ref_from(match.group("prefix"), match.group("body")))
        except ValueError:
            continue
    return tuple(found)


class _Graph:
    """Formula cells and, for each, the formula cells that read it."""

    def __init__(self, book: SpreadsheetBook, formulas: dict[Key, str], budget: WorkBudget) -> None:
        self.book = book
        self.budget = budget
        self.owners = {s.pk: s for s in book.by_title.values()}
        by_sheet: dict[int, dict[int, list[int]]] = defaultdict(lambda: defaultdict(list))
        for pk, row, col in sorted(formulas):
            by_sheet[pk][col].append(row)
        self.columns = {pk: (sorted(cols), cols) for pk, cols in by_sheet.items()}
        self.refs = {key: references(text) for key, text in formulas.items()}
        self.volatile = {key for key, text in formulas.items() if _VOLATILE.search(text)}
        self.readers: dict[Key, list[Key]] = defaultdict(list)
        for key, refs in self.refs.items():
            self.book.current = self.owners[key[0]]
            for ref in refs:
                for target in self.formula_cells(ref):
                    self.readers[target].append(key)

    def formula_cells(self, ref: Ref) -> Iterable[Key]:
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
                yield target.pk, row, col

    def reading(self, changed: list[tuple[int, Box]]) -> set[Key]:
        """The formula cells inside the changed boxes or reading them, and those whose value
        may change with time (TODAY)."""
        found = set(self.volatile)
        for key, refs in self.refs.items():
            self.book.current = self.owners[key[0]]
            if _inside(key, changed) or any(self.touches(ref, changed) for ref in refs):
                found.add(key)
        return found

    def touches(self, ref: Ref, changed: list[tuple[int, Box]]) -> bool:
        target = self.book.resolve(ref.sheet)
        if target is None:
            return False
        r1, c1, r2, c2 = ref.bounds
        return any(pk == target.pk and r1 <= box.r2 and (r2 is None or r2 >= box.r1) and c1 <= box.c2
                   and (c2 is None or c2 >= box.c1) for pk, box in changed)

    def order(self, start: set[Key]) -> tuple[list[Key], list[Key]]:
        """`start` and every formula cell reading them, directly or not, in an order that
        evaluates each after those it reads; and the cells left over (in or behind a circular
        reference)."""
        affected, queue = set(start), deque(start)
        while queue:
            for reader in self.readers.get(queue.popleft(), ()):
                if reader not in affected:
                    affected.add(reader)
                    queue.append(reader)
        waiting = dict.fromkeys(affected, 0)
        for key in affected:
            for reader in self.readers.get(key, ()):
                waiting[reader] += 1
        ready = deque(sorted(k for k, n in waiting.items() if n == 0))
        done: list[Key] = []
        while ready:
            key = ready.popleft()
            done.append(key)
            for reader in self.readers.get(key, ()):
                waiting[reader] -= 1
                if waiting[reader] == 0:
                    ready.append(reader)
        placed = set(done)
        return done, sorted(k for k in affected if k not in placed)


def _inside(key: Key, changed: list[tuple[int, Box]]) -> bool:
    pk, row, col = key
    return any(p == pk and box.r1 <= row <= box.r2 and box.c1 <= col <= box.c2 for p, box in changed)


def recalculate(session: Session, spreadsheet: int, today: float,
                changed: list[tuple[int, Box]] | None = None) -> int:
    """Evaluate again the formulas that read `changed` (sheet row key, box) pairs, directly
    or not, or every formula of the spreadsheet when `changed` is None; store the values that
    changed. Returns how many formula cells were evaluated."""
    found = sql.run(session, "SELECT c.sheet, c.row, c.col, c.formula FROM gs_cell c JOIN gs_sheet s "
                    "ON s.pk = c.sheet WHERE s.spreadsheet = ? AND c.formula IS NOT NULL", (spreadsheet,)).fetchall()
    if not found:
        return 0
    budget = WorkBudget(RECALC_CELLS)
    try:
        return _evaluate(session, spreadsheet, {(pk, r, c): f for pk, r, c, f in found}, today, budget, changed)
    except BudgetExceeded as exc:
        raise ToolFailure(Code.RESOURCE_EXHAUSTED, f"the spreadsheet's formulas are too costly to recalculate: {exc}",
                          hint="use smaller ranges in formulas or fewer formulas") from None


def _evaluate(session: Session, spreadsheet: int, formulas: dict[Key, str], today: float, budget: WorkBudget,
              changed: list[tuple[int, Box]] | None) -> int:
    book = SpreadsheetBook(session, {s.title.casefold(): s for s in sheets(session, spreadsheet)})
    graph = _Graph(book, formulas, budget)
    ordered, cyclic = graph.order(set(formulas) if changed is None else graph.reading(changed))
    evaluator = Evaluator(book, today, budget)
    cur = sql.cursor(session)
    update = "UPDATE gs_cell SET value = ?, value_type = ? WHERE sheet = ? AND row = ? AND col = ?"
    for key in ordered:
        try:
            node = parse(formulas[key])
        except FormulaSyntaxError:
            node = ERROR
        book.current = graph.owners[key[0]]
        cur.execute(update, (*stored(evaluator.evaluate(node)), *key))
    cur.executemany(update, [(*stored(REF), *key) for key in cyclic])
    return len(ordered) + len(cyclic)
