"""A spreadsheet formula engine independent of any storage: parse a formula (`parse`),
evaluate it over a `Book` (`Evaluator`), list the cells it reads (`references`), and rewrite
its references when rows or columns are inserted or a sheet is renamed (`rewrite`).

Values are None (empty), float, str, bool, `Serial` (a date as a day number) or
`FormulaError`; a range argument is a `Block` (rows of values)."""

from mock_servers.core.formulas.a1 import Ref, parse_ref, render_ref
from mock_servers.core.formulas.evaluate import Book, Evaluator, WorkBudget
from mock_servers.core.formulas.parser import FormulaSyntaxError, parse, references
from mock_servers.core.formulas.values import (
    Block,
    FormulaError,
    Serial,
    date_serial,
    serial_date,
)

__all__ = ["Block", "Book", "Evaluator", "FormulaError", "FormulaSyntaxError", "Ref", "Serial",
           "WorkBudget", "date_serial", "parse", "parse_ref", "references", "render_ref",
           "serial_date"]
