"""The generic agents' pieces on their own: wrong values no normalisation undoes, table
perturbations and renderings, script rewriting, invented ids of the right shape."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from checkers.normalize import COMPARE
from loca.adversary import files
from loca.adversary.base import NotApplicable, Once, rewritten, then_claim
from loca.adversary.files import Table
from loca.adversary.mail import _next_digit
from loca.adversary.values import alterable, altered
from loca.core.outputs import Column, TableFile
from loca.core.script import Script, ToolReply, ToolRequest

OUT = TableFile("t.csv", columns=(Column("name", "Si"), Column("email", "E"), Column("score", "N"),
                                  Column("rank", "N"), Column("note")), key=("name",))


@pytest.mark.parametrize("value", ["Alice", "bob@example.org", "73.215%", "01/15/2025", "TBD", 5, 0.25, True,
                                   date(2025, 1, 31), "INV-2024-00001"])
def test_altered_values_stay_wrong_under_every_normalisation(value: Any) -> None:
    wrong = altered(value)
    assert wrong != value
    for norm in ("S", "Si", "E", "N", "I", "date"):
        assert not (COMPARE[norm](wrong, value) and COMPARE[norm](value, value)), norm


def test_what_cannot_be_altered() -> None:
    assert not alterable(None) and not alterable("  ") and alterable(b"x")
    with pytest.raises(NotApplicable):
        altered(None)


def _table() -> Table:
    return Table(["name", "email", "score", "rank", "note"],
                 [["ann", "ann@x.org", "0.5", "0.25", "fine"], ["bob", "bob@x.org", "0.7", "0.7", "ok"]])


def test_table_perturbations() -> None:
    table = _table()
    files.drop_row(table, OUT, 0)
    assert [r[0] for r in table.rows] == ["ann"]
    files.duplicate_row(table, OUT, 0)
    files.extra_row(table, OUT, 0)
    assert [r[0] for r in table.rows] == ["ann", "ann", "bnn"]
    table = _table()
    files.swap_values(table, OUT, 0)  # score and rank: both N, different values
    assert table.rows[0][2:4] == ["0.25", "0.5"] and table.rows[1] == _table().rows[1]
    files.change_value(table, OUT, 1)
    assert table.rows[0] != _table().rows[0]
    with pytest.raises(NotApplicable):
        files.drop_row(Table(["name"], []), OUT, 0)


def test_renderings_change_only_what_is_free() -> None:
    assert files.recased("ann@x.org", "E") == "ANN@X.ORG" and files.recased("fine", "S") == "fine"
    assert files.padded("ok", "S") == " ok " and files.padded("", "S") == ""
    assert files.as_text(5, "I") == "5" and files.as_text(5, "S") == 5
    assert files.native("01/15/2025", "date").date() == date(2025, 1, 15) and files.native("x", "date") == "x"


def _script(tools: Any) -> Script:
    replies = yield [ToolRequest("send", {"body": "a"}), ToolRequest("send", {"body": "b"})]
    more = yield ToolRequest("claim_done", {})
    return [r.text for r in replies + more]


def _drive(script: Script) -> list[ToolRequest]:
    made: list[ToolRequest] = []
    step = next(script)
    try:
        while True:
            batch = step if isinstance(step, list) else [step]
            made += batch
            step = script.send([ToolReply(r.name, False) for r in batch])
    except StopIteration:
        return made


def test_a_rewriter_changes_the_first_call_it_accepts_and_more_calls_precede_the_claim() -> None:
    once = Once(lambda r: ToolRequest(r.name, {"body": "changed"}) if r.name == "send" else None)
    made = _drive(rewritten(_script(None), once))
    assert [r.arguments for r in made] == [{"body": "changed"}, {"body": "b"}, {}] and once.done

    def extra() -> Script:
        yield ToolRequest("move", {})

    assert [r.name for r in _drive(then_claim(_script(None), extra(), "claim_done"))] == ["send", "send", "move",
                                                                                           "claim_done"]


def test_invented_ids_keep_their_shape() -> None:
    assert _next_digit("INV-2024-00019") == "INV-2024-00010" and _next_digit("ABC") == "BBC"


def test_a_call_made_as_several_gives_the_script_the_last_reply() -> None:
    twice = Once(lambda r: [r, ToolRequest("send", {"body": "again"})] if r.name == "send" else None)
    script = rewritten(_script(None), twice)
    step = next(script)
    assert [r.arguments for r in step] == [{"body": "a"}, {"body": "again"}, {"body": "b"}]
    replies = [ToolReply("first", False), ToolReply("second", False), ToolReply("third", False)]
    step = script.send(replies)
    assert step == [ToolRequest("claim_done", {})]
    with pytest.raises(StopIteration) as done:
        script.send([ToolReply("claimed", False)])
    assert done.value.value == ["second", "third", "claimed"]
