"""Names spreadsheet programs define as functions, whether or not this engine computes them: a
formula calling one this engine lacks cannot be computed faithfully (the program would give a
value, not #NAME?), while a name no program defines is #NAME? as it would be there."""

from __future__ import annotations

import re

from openpyxl.utils.formulas import FORMULAE  # Excel's classic function list

from mock_servers.core.formulas import functions
from mock_servers.core.formulas.a1 import Ref
from mock_servers.core.formulas.parser import FormulaSyntaxError, Func, Node, Op, parse
from mock_servers.core.formulas.text import text_format_kind

# Excel functions newer than openpyxl's list.
EXCEL_MODERN = frozenset({
    "CONCAT", "FILTER", "IFS", "LAMBDA", "LET", "MAXIFS", "MINIFS", "RANDARRAY", "SEQUENCE",
    "SORT", "SORTBY", "SWITCH", "TEXTJOIN", "TEXTSPLIT", "UNIQUE", "XLOOKUP", "XMATCH",
})

# Functions of Google Sheets missing from the two lists above.
SHEETS_ONLY = frozenset({
    "ARRAYFORMULA", "ARRAY_CONSTRAIN", "BYCOL", "BYROW", "CHOOSECOLS", "CHOOSEROWS", "CONTINUE",
    "COUNTUNIQUE", "COUNTUNIQUEIFS", "DETECTLANGUAGE", "EPOCHTODATE", "FLATTEN", "GOOGLEFINANCE",
    "GOOGLETRANSLATE", "HSTACK", "IMAGE", "IMPORTDATA", "IMPORTFEED", "IMPORTHTML", "IMPORTRANGE",
    "IMPORTXML", "ISBETWEEN", "ISEMAIL", "ISURL", "JOIN", "MAKEARRAY", "MAP", "QUERY", "REDUCE",
    "REGEXEXTRACT", "REGEXMATCH", "REGEXREPLACE", "SCAN", "SORTN", "SPARKLINE", "SPLIT", "TOCOL",
    "TOROW", "TO_DATE", "TO_DOLLARS", "TO_PERCENT", "TO_PURE_NUMBER", "TO_TEXT", "VSTACK", "WRAPCOLS",
    "WRAPROWS", "XOR",
})

SPREADSHEET_FUNCTIONS = frozenset(FORMULAE) | EXCEL_MODERN | SHEETS_ONLY


def calls(node: Node) -> list[Func]:
    """Every function call in the tree."""
    found: list[Func] = []
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, Func):
            found.append(item)
        if isinstance(item, (Func, Op)):
            stack.extend(item.args)
    return found


def uncomputed(formula: str) -> list[str]:
    """The spreadsheet functions `formula` calls that this engine does not compute, sorted;
    empty when it computes them all, or when the formula does not parse (its own error shows)."""
    try:
        called = {call.name for call in calls(parse(formula))}
    except FormulaSyntaxError:
        return []
    return sorted(name for name in called if name not in functions.TABLE and name in SPREADSHEET_FUNCTIONS)


_STRING = re.compile(r'"(?:[^"]|"")*"')


def formula_problem(formula: str) -> str | None:
    """Why this engine cannot compute `formula` as a spreadsheet program would, else None: it
    holds an array literal ({1,2}), formats with a TEXT pattern this engine lacks (times,
    colours), calls a function this engine lacks, or returns a range (spread over neighbouring
    cells by Sheets; one value per cell here). A formula that does not parse otherwise is no
    problem here: it is #ERROR!, as in Sheets."""
    try:
        node = parse(formula)
    except FormulaSyntaxError:
        if "{" in _STRING.sub("", formula):
            return "holds an array literal {...}, which this server does not compute"
        return None
    patterns = [call.args[1] for call in calls(node) if call.name == "TEXT" and len(call.args) == 2
                and isinstance(call.args[1], str)]
    unformatted = [p for p in patterns if text_format_kind(p) is None]
    if unformatted:
        return (f"formats with TEXT pattern {unformatted[0]!r}, which this server does not compute; it formats "
                "numbers (0, #,##0.00, 0%, $0.00) and dates (yyyy-mm-dd, mmm d, yyyy, dddd), no times or colours")
    missing = uncomputed(formula)
    if missing:
        return (f"calls {', '.join(missing)}, which this server does not compute; "
                f"it computes {', '.join(sorted(functions.TABLE))}")
    if isinstance(node, Ref) and node.bounds[:2] != tuple(node.bounds[2:]):
        return "returns a range, which Sheets spreads over the cells around it; a formula here gives one value"
    return None
