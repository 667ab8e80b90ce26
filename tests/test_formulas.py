"""The formula engine of mock_servers/core/formulas over an in-memory book: operators,
functions, error values as Sheets gives them, reference rewriting, bounds."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from mock_servers.core.formulas import Evaluator, FormulaError, Serial, WorkBudget, date_serial, parse
from mock_servers.core.formulas.a1 import parse_ref, render_ref
from mock_servers.core.formulas.evaluate import BudgetExceeded
from mock_servers.core.formulas.rewrite import inserted, renamed, rewrite
from mock_servers.core.formulas.values import Scalar

# Sheet1: A1:A3 = 1, 2, 3; B1:B3 = "a", "b", "c"; C1 = TRUE; D1:D3 = 10, "x", 30 (E empty)
CELLS: dict[tuple[str | None, int, int], Scalar] = {
    (None, 0, 0): 1.0, (None, 1, 0): 2.0, (None, 2, 0): 3.0,
    (None, 0, 1): "a", (None, 1, 1): "b", (None, 2, 1): "c", (None, 0, 2): True,
    (None, 0, 3): 10.0, (None, 1, 3): "x", (None, 2, 3): 30.0,
    ("q1 data", 0, 0): 100.0,
}


class DictBook:
    def size(self, sheet: str | None) -> tuple[int, int] | None:
        return (1000, 26) if sheet is None or sheet.casefold() in ("q1 data", "sheet1") else None

    def block(self, sheet: str | None, r1: int, c1: int, r2: int, c2: int) -> list[list[Scalar]]:
        key = None if sheet is None or sheet.casefold() == "sheet1" else sheet.casefold()
        return [[CELLS.get((key, r, c)) for c in range(c1, c2 + 1)] for r in range(r1, r2 + 1)]


def evaluate(formula: str, budget: int = 1_000_000) -> Any:
    result = Evaluator(DictBook(), date_serial(date(2025, 3, 15)), WorkBudget(budget)).evaluate(parse(formula))
    return result.code if isinstance(result, FormulaError) else result


@pytest.mark.parametrize(("formula", "expected"), [
    ("=1+2*3", 7), ("=(1+2)*3", 9), ("=-2^2", 4), ("=2^3^2", 64), ("=10%", 0.1), ("=7/2", 3.5),
    ("=\"a\"&1&TRUE", "a1TRUE"), ("=1=1", True), ("=\"A\"=\"a\"", True), ("=2<\"a\"", True), ("=\"3\"+1", 4),
    ("=A1+A2", 3), ("=E1+1", 1), ("=E1", None), ("=Sheet1!A3", 3), ("='Q1 Data'!A1*2", 200),
    ("=SUM(A1:A3)", 6), ("=SUM(A:A)", 6), ("=SUM(A1:D3)", 46), ("=SUM(1,\"2\",TRUE)", 4), ("=AVERAGE(A1:A3)", 2),
    ("=COUNT(A1:D3)", 5), ("=COUNTA(A1:D3)", 10), ("=MIN(A1:A3)", 1), ("=MAX(D1:D3)", 30), ("=MAX(E1:E3)", 0),
    ("=COUNTIF(A1:A3,\">1\")", 2), ("=COUNTIF(B1:B3,\"b\")", 1), ("=COUNTIF(B1:B3,\"<>b\")", 2),
    ("=COUNTIF(B1:B3,\"?\")", 3), ("=COUNTIF(D1:D3,\">=10\")", 2), ("=COUNTIF(E1:E3,\"\")", 3),
    ("=COUNTIFS(A1:A3,\">1\",B1:B3,\"c\")", 1), ("=SUMIF(B1:B3,\"<>a\",A1:A3)", 5), ("=SUMIF(A1:A3,\">=2\")", 5),
    ("=SUMIFS(D1:D3,A1:A3,\"<3\")", 10), ("=ROUND(2.345,2)", 2.35), ("=ROUND(-2.5)", -3), ("=ROUND(1234,-2)", 1200),
    ("=ROUNDUP(1.21,1)", 1.3), ("=ROUNDDOWN(-1.29,1)", -1.2), ("=ABS(-4)", 4), ("=IF(A1>1,\"big\",\"small\")", "small"),
    ("=IF(FALSE,1)", False), ("=IFS(A1>5,1,A1>0,2)", 2), ("=IFS(A1>5,1)", "#N/A"), ("=IFERROR(1/0,\"x\")", "x"),
    ("=IFERROR(5,\"x\")", 5), ("=AND(TRUE,A1)", True), ("=OR(FALSE,A1>2)", False), ("=NOT(0)", True),
    ("=VLOOKUP(2,A1:B3,2,FALSE)", "b"), ("=VLOOKUP(2.5,A1:B3,2)", "b"), ("=VLOOKUP(9,A1:B3,2,FALSE)", "#N/A"),
    ("=VLOOKUP(1,A1:B3,3,FALSE)", "#REF!"), ("=HLOOKUP(\"a\",B1:B3,3,FALSE)", "c"), ("=INDEX(A1:B3,3,2)", "c"),
    ("=INDEX(A1:A3,2)", 2), ("=INDEX(A1:A3,4)", "#REF!"), ("=MATCH(\"c\",B1:B3,0)", 3), ("=MATCH(2.5,A1:A3)", 2),
    ("=MATCH(\"z\",B1:B3,0)", "#N/A"), ("=XLOOKUP(3,A1:A3,B1:B3)", "c"), ("=XLOOKUP(9,A1:A3,B1:B3,\"none\")", "none"),
    ("=XLOOKUP(2.5,A1:A3,B1:B3,,1)", "c"), ("=XLOOKUP(\"B\",B1:B3,A1:A3)", 2), ("=CONCATENATE(B1:B3,\"!\")", "abc!"),
    ("=TEXT(1234.5,\"#,##0.00\")", "1,234.50"), ("=TEXT(0.256,\"0.0%\")", "25.6%"), ("=TEXT(3,\"000\")", "003"),
    ("=TEXT(DATE(2025,1,5),\"yyyy-mm-dd\")", "2025-01-05"), ("=TEXT(DATE(2025,1,5),\"mmm d, yyyy\")", "Jan 5, 2025"),
    ("=LEN(\"hello\")", 5), ("=LEFT(\"abc\")", "a"), ("=RIGHT(\"abc\",2)", "bc"),
    ("=MID(\"hello\",2,3)", "ell"), ("=TRIM(\"  a   b  \")", "a b"), ("=UPPER(\"ab\")&LOWER(\"CD\")", "ABcd"),
    ("=DATE(2025,13,1)", 46023), ("=YEAR(TODAY())", 2025), ("=MONTH(\"2025-03-04\")", 3),
    ("=DAY(DATE(2024,2,29))", 29), ("=TODAY()-DATE(2025,3,1)", 14), ("=1/0", "#DIV/0!"), ("=NOSUCH(1)", "#NAME?"),
    ("=foo", "#NAME?"), ("=Missing!A1", "#REF!"), ("=\"a\"*2", "#VALUE!"),
    ("=A1:A3", "#VALUE!"), ("=SUM(1/0,2)", "#DIV/0!"), ("=ABS()", "#N/A"), ("=(-8)^0.5", "#NUM!"), ("=10^400", "#NUM!"),
])
def test_formula(formula: str, expected: Any) -> None:
    assert evaluate(formula) == expected


def test_dates_are_serials_shown_as_dates() -> None:
    today = evaluate("=TODAY()")
    assert isinstance(today, Serial) and today == 45731
    assert isinstance(evaluate("=TODAY()+1"), Serial) and not isinstance(evaluate("=TODAY()-TODAY()"), Serial)


@pytest.mark.parametrize("formula", ["=SUM(", "=1+", "=(1", "=1)", "=SUM(1,,", "=@", "=1 2",
                                     "=" + "(" * 101 + "1" + ")" * 101, "=" + "-" * 500 + "1",
                                     "=" + "+".join(["1"] * 300), "=" + "x" * 9000])
def test_not_formulas(formula: str) -> None:
    with pytest.raises(ValueError):
        parse(formula)


def test_work_is_bounded() -> None:
    with pytest.raises(BudgetExceeded):
        evaluate("=SUM(A:Z)", budget=10_000)


@pytest.mark.parametrize(("text", "bounds", "shown"), [
    ("B2:C9", (1, 1, 8, 2), "B2:C9"), ("C9:B2", (1, 1, 8, 2), "B2:C9"), ("A2:C", (1, 0, None, 2), "A2:C"),
    ("B:B", (0, 1, None, 1), "B:B"), ("2:5", (1, 0, 4, None), "2:5"), ("$A$1", (0, 0, 0, 0), "$A$1"),
    ("'Q1 Data'!A:A", (0, 0, None, 0), "'Q1 Data'!A:A"), ("Bob's!A1", (0, 0, 0, 0), "'Bob''s'!A1"),
])
def test_a1_references(text: str, bounds: tuple[Any, ...], shown: str) -> None:
    ref = parse_ref(text)
    assert ref.bounds == bounds and render_ref(ref) == shown


def test_rewrites_follow_inserts_and_renames() -> None:
    assert rewrite("=SUM(A1:A10)+$C$3 & \"A5\"", inserted("row", 4, 2)) == "=SUM(A1:A12)+$C$3 & \"A5\""
    assert rewrite("=B2+C2+Z1", inserted("col", 2, 1)) == "=B2+D2+AA1"
    assert rewrite("=SUM('Old Data'!A1:A3)+old!B1+B1", renamed("old data", "New")) == "=SUM(New!A1:A3)+old!B1+B1"
    assert rewrite("=SUM(", inserted("row", 0, 1)) == "=SUM("
