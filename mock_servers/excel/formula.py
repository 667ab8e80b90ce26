"""Static formula checks (no evaluation): tokenising, known function names, balanced
parentheses and references to sheets that exist."""

from __future__ import annotations

from openpyxl.formula.tokenizer import Token, Tokenizer, TokenizerError
from openpyxl.utils import FORMULAE

from mock_servers.core.formulas.known import EXCEL_MODERN
from mock_servers.excel.limits import MAX_FORMULA, text_problem


def normalise(formula: str) -> str:
    """The formula with its leading `=` (added when missing)."""
    text = formula.strip()
    return text if text.startswith("=") else f"={text}"


def formula_problem(formula: str, sheetnames: list[str]) -> str | None:
    """Why `formula` is not valid, or None when it is."""
    text = normalise(formula)
    if text == "=":
        return "the formula is empty"
    problem = text_problem(text, MAX_FORMULA)
    if problem is not None:
        return f"the formula {problem}"
    try:
        tokens = Tokenizer(text).items
    except TokenizerError as exc:
        return f"cannot parse the formula: {exc}"
    except IndexError:  # the tokenizer's stack underflows on a stray closing bracket
        return "a closing parenthesis has no opening one"
    if tokens and tokens[-1].type in (Token.OP_IN, Token.OP_PRE):
        return f"the formula ends with the operator {tokens[-1].value}"
    depth = 0
    for token in tokens:
        if token.subtype == Token.OPEN:
            depth += 1
        elif token.subtype == Token.CLOSE:
            depth -= 1
        if depth < 0:
            return "a closing parenthesis has no opening one"
        problem = _function_problem(token) or _sheet_problem(token, sheetnames)
        if problem:
            return problem
    return "unbalanced parentheses" if depth else None


def _function_problem(token: Token) -> str | None:
    if token.type != Token.FUNC or token.subtype != Token.OPEN:
        return None
    name = token.value[:-1].upper().removeprefix("_XLFN.").removeprefix("_XLWS.")
    if name and name not in FORMULAE and name not in EXCEL_MODERN:
        return f"unknown function {name}"
    return None


def _sheet_problem(token: Token, sheetnames: list[str]) -> str | None:
    if token.type != Token.OPERAND or token.subtype != Token.RANGE or "!" not in token.value:
        return None
    sheet = token.value.rsplit("!", 1)[0]
    if sheet.startswith("'") and sheet.endswith("'"):
        sheet = sheet[1:-1].replace("''", "'")
    if sheet.startswith("["):
        return None  # a reference to another workbook
    if sheet not in sheetnames:
        return f"sheet '{sheet}' referenced by the formula does not exist"
    return None
