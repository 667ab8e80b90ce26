"""Rewrite the references of a formula's text (the rest of the text kept as written): when
rows or columns are inserted, and when a sheet is renamed."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from mock_servers.core.formulas.a1 import End, Ref, render_ref
from mock_servers.core.formulas.parser import FormulaSyntaxError, tokens


def rewrite(formula: str, change: Callable[[Ref], Ref]) -> str:
    """`formula` with each reference replaced by `change(reference)`; a text that does not
    parse is returned as it is."""
    lead = 1 if formula.startswith("=") else 0
    try:
        found = tokens(formula[lead:])
    except FormulaSyntaxError:
        return formula
    out, pos = [formula[:lead]], 0
    for token in found:
        if token.ref is None:
            continue
        new = change(token.ref)
        if new != token.ref:
            out.append(formula[lead + pos:lead + token.start])
            out.append(render_ref(new))
            pos = token.start + len(token.text)
    out.append(formula[lead + pos:])
    return "".join(out)


def _shift(end: End, axis: str, at: int, count: int) -> End:
    value = end.row if axis == "row" else end.col
    if value is None or value < at:
        return end
    return replace(end, row=value + count) if axis == "row" else replace(end, col=value + count)


def inserted(axis: str, at: int, count: int) -> Callable[[Ref], Ref]:
    """The change of a reference to the sheet where `count` rows (axis "row") or columns
    ("col") were inserted before 0-based `at`: what was at or after `at` moves on."""
    return lambda ref: replace(ref, start=_shift(ref.start, axis, at, count),
                               end=_shift(ref.end, axis, at, count))


def renamed(old: str, new: str) -> Callable[[Ref], Ref]:
    """The change of every reference to the sheet titled `old` (any case)."""
    folded = old.casefold()
    return lambda ref: ref.with_sheet(new) if ref.sheet is not None and ref.sheet.casefold() == folded else ref
