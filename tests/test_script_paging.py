"""The scripts' helpers: token-continued and offset-paged listings and a turn of parallel calls,
driven by hand."""

from __future__ import annotations

import json
from typing import Any

import pytest

from loca.core.script import TURN_CHARS, ToolReply, ToolRequest, Turn, call_all, paged_by_offset, paged_by_token


def _drive(turn: Turn, answer: Any) -> tuple[list[list[ToolRequest]], Any]:
    """Run a paging script against `answer(request) -> dict`; the turns it asked and its result."""
    asked: list[list[ToolRequest]] = []
    try:
        requests = next(turn)
        while True:
            asked.append(requests)
            requests = turn.send([ToolReply(json.dumps(answer(r)), False) for r in requests])
    except StopIteration as stop:
        return asked, stop.value


ITEMS = list(range(7))


def _by_token(request: ToolRequest) -> dict[str, Any]:
    args = dict(request.arguments)  # type: ignore[arg-type]
    start = int(args.get("page_token") or 0)
    end = start + args["max_results"]
    return {"tables": ITEMS[start:end], "next_page_token": str(end) if end < len(ITEMS) else None}


def test_paged_by_token_follows_tokens_or_stops_after_the_first_page() -> None:
    asked, items = _drive(paged_by_token("list", {"dataset_id": "d"}, "tables", "max_results", 3), _by_token)
    assert items == ITEMS and len(asked) == 3
    assert "page_token" not in asked[0][0].arguments and asked[1][0].arguments["page_token"] == "3"  # type: ignore[index]
    asked, items = _drive(paged_by_token("list", {}, "tables", "max_results", 3, first_page_only=True), _by_token)
    assert items == ITEMS[:3] and len(asked) == 1


def _by_offset(request: ToolRequest) -> dict[str, Any]:
    args = dict(request.arguments)  # type: ignore[arg-type]
    rows = list(range(int(args["query"])))
    start = args["start_index"]
    cut = min(args["max_results"], 2)  # an output cap: at most two rows a page
    return {"rows": rows[start:start + cut], "has_more": start + cut < len(rows)}


def test_paged_by_offset_reads_every_listing_at_once_past_cut_pages() -> None:
    asked, rows = _drive(paged_by_offset("q", [{"query": "5"}, {"query": "1"}, {"query": "0"}], "rows",
                                         "max_results", 1000), _by_offset)
    assert rows == [[0, 1, 2, 3, 4], [0], []]
    assert [len(turn) for turn in asked] == [3, 1, 1]
    assert [r.arguments["start_index"] for turn in asked for r in turn] == [0, 0, 0, 2, 4]  # type: ignore[index]


def test_a_failed_page_raises() -> None:
    turn = paged_by_offset("q", [{"query": "3"}], "rows", "max_results", 10)
    next(turn)
    with pytest.raises(RuntimeError, match="q failed"):
        turn.send([ToolReply("Error [NOT_FOUND]", True)])


def test_call_all_splits_large_calls_into_turns_within_the_size_bound() -> None:
    """Hundreds of mails are sent in a few turns, each within TURN_CHARS of arguments, in order."""
    body = "x" * (TURN_CHARS // 10)
    requests = [ToolRequest("send", {"n": n, "body": body}) for n in range(35)]
    script = call_all(requests)
    turns = []
    turn = next(script)
    with pytest.raises(StopIteration) as done:
        while True:
            turns.append([r.arguments["n"] for r in turn])  # type: ignore[index]
            assert sum(len(json.dumps(r.arguments)) for r in turn) <= TURN_CHARS
            turn = script.send([ToolReply(str(r.arguments["n"]), False) for r in turn])  # type: ignore[index]
    assert len(turns) == 4 and [n for t in turns for n in t] == list(range(35))
    assert done.value.value == list(range(35))


def test_call_all_is_one_turn_that_must_all_succeed() -> None:
    script = call_all([ToolRequest("t", {"n": 1}), ToolRequest("t", {"n": 2})])
    assert [r.arguments for r in next(script)] == [{"n": 1}, {"n": 2}]  # one turn, both at once
    with pytest.raises(StopIteration) as done:
        script.send([ToolReply('{"ok": 1}', False), ToolReply("plain", False)])
    assert done.value.value == [{"ok": 1}, "plain"]
    failing = call_all([ToolRequest("t", {}), ToolRequest("u", {})])
    next(failing)
    with pytest.raises(RuntimeError, match="u failed: boom"):
        failing.send([ToolReply("{}", False), ToolReply("boom", True)])
    with pytest.raises(StopIteration) as nothing:
        next(call_all([]))
    assert nothing.value.value == []
