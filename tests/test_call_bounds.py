"""The bounds every call obeys: arguments checked at the boundary (storable text, 64-bit
integers, finite numbers, size and nesting), the wall-clock and memory budgets, MemoryError and
RecursionError as error results, error texts within the output cap; on both paths."""

from __future__ import annotations

import asyncio
import time
from typing import Annotated, Any

import pytest
from fastmcp import Client
from pydantic import Field

from mock_servers.core import snapshot
from mock_servers.core.errors import ToolFailure, cap_error, invalid
from mock_servers.core.limits import MAX_DEPTH, MAX_INT, MAX_TOTAL_CHARS, MAX_VALUES, MIN_INT, check_arguments
from mock_servers.core.models import ClaimRecord
from mock_servers.core.toolkit import Call, ServerRuntime, Toolbox
from mock_servers.core.types import Int

toolbox = Toolbox("bound")


@toolbox.tool(rw="read")
def bound_echo(call: Call, value: Annotated[Any, Field(description="anything")] = None,
               short: Annotated[str | None, Field(max_length=2000, description="short text")] = None,
               number: Annotated[Int | None, Field(description="an integer")] = None) -> dict:
    """Echo."""
    return {"value": value, "short": short, "number": number}


@toolbox.tool(rw="read", raw_text=("code",))
def bound_raw(call: Call, code: Annotated[str, Field(description="raw text")]) -> dict:
    """Take raw text."""
    return {"chars": len(code)}


@toolbox.tool(rw="write")
def bound_spin(call: Call) -> str:
    """Write, then never finish (swallowing ordinary exceptions)."""
    call.session.add(ClaimRecord(id=1, claimed_at="x"))
    call.session.flush()
    while True:
        try:
            time.sleep(0.001)
        except Exception:  # what a careless tool does; the stop must still get through
            continue


@toolbox.tool(rw="read")
def bound_slow_sql(call: Call) -> dict:
    """A query that never ends."""
    conn = call.session.connection().connection
    conn.execute("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c")
    return {}


@toolbox.tool(rw="read", own_deadline=True)
def bound_own_clock(call: Call) -> str:
    """Takes longer than the budget, bounded by a timeout of its own."""
    time.sleep(0.6)
    return "done"


@toolbox.tool(rw="read")
def bound_hog(call: Call) -> str:
    """Grows without end."""
    held = []
    while True:
        held.append(b"\x01" * (1 << 20))  # touched pages: resident, unlike a zeroed buffer


@toolbox.tool(rw="read")
def bound_out_of_memory(call: Call) -> str:
    """An allocation that fails."""
    raise MemoryError


@toolbox.tool(rw="read")
def bound_recurse(call: Call) -> str:
    """Unbounded recursion."""
    def down(n: int) -> int:
        return down(n + 1)
    return str(down(0))


@toolbox.tool(rw="read")
def bound_long_error(call: Call) -> str:
    """An error that quotes a long input."""
    raise invalid("no such thing: " + "y" * 100_000, hint="list the things first")


@pytest.fixture
def rt(make_world) -> ServerRuntime:
    world, _ = make_world(["claim_done"])
    return ServerRuntime(toolbox, world, {"max_call_seconds": 0.3, "max_call_memory_mb": 64,
                                          "max_output_chars": 1000})


def call(rt: ServerRuntime, tool: str, **args: Any) -> tuple[str, bool, float]:
    started = time.monotonic()
    outcome = asyncio.run(rt.call(tool, args))
    return outcome.text, outcome.is_error, time.monotonic() - started


def refused(value: Any, limits: dict[str, int] | None = None, raw: frozenset[str] = frozenset()) -> str:
    with pytest.raises(ToolFailure) as caught:
        check_arguments({"cells": value}, limits or {}, 200_000, raw)
    assert caught.value.code.value == "INVALID_ARGUMENT"
    return caught.value.message


@pytest.mark.parametrize(("value", "field", "why"), [
    ([{"value": 1}, {"value": 2}, {"value": 3}, {"value": "a\x00b"}], "cells[3].value",
     "a NUL character at position 1"),
    (["\x0b"], "cells[0]", "the control character U+000B"),
    ({"a": {"b": "x\ud800"}}, "cells.a.b", "an unpaired surrogate U+D800"),
    ({"odd key": ["\ufffe"]}, "cells['odd key'][0]", "the non-character U+FFFE"),
    ("\uffff", "cells", "the non-character U+FFFF"),
    ([MAX_INT + 1], "cells[0]", "integer out of range"),
    ({"n": MIN_INT - 1}, "cells.n", "integer out of range"),
    (10**30, "cells", "integer out of range"),
    ([float("nan")], "cells[0]", "not a finite number"),
    (float("-inf"), "cells", "not a finite number"),
    ("x" * 200_001, "cells", "200001 characters; at most 200000"),
])
def test_unstorable_values_are_refused_naming_the_field(value: Any, field: str, why: str) -> None:
    message = refused(value)
    assert message.startswith(f"parameter '{field}': ") and why in message, message


def test_what_can_be_stored_passes() -> None:
    check_arguments({"cells": ["tab\tnew\nline\rback", MAX_INT, MIN_INT, 1e308, "é€😀\u00a0\ufffd",
                               {"k": [None, True, 0.5]}]}, {}, 200_000)


def test_size_depth_and_key_limits() -> None:
    deep: list[Any] = []
    node = deep
    for _ in range(MAX_DEPTH + 5):
        node.append([])
        node = node[0]
    assert f"nested more than {MAX_DEPTH} levels deep" in refused(deep)
    assert "values in all" in refused(list(range(MAX_VALUES + 1)))
    assert "characters in all" in refused(["x" * 150_000] * (MAX_TOTAL_CHARS // 150_000 + 1))
    assert "a key: contains a NUL character" in refused({"a\x00": 1})
    assert "object keys must be strings" in refused({1: 1})
    assert "at most 10" in refused("x" * 11, limits={"cells": 10})
    with pytest.raises(ToolFailure, match="a parameter name"):
        check_arguments({"\x01": 1}, {}, 100)


def test_raw_parameters_take_control_characters_but_not_surrogates() -> None:
    check_arguments({"cells": "\x00\x0c\x1b[0m\ufffe"}, {}, 100, frozenset({"cells"}))
    assert "unpaired surrogate" in refused("\udc00", raw=frozenset({"cells"}))


def test_the_runtime_refuses_before_the_tool_runs_and_on_both_paths(rt: ServerRuntime) -> None:
    text, is_error, _ = call(rt, "bound_echo", value={"rows": [[1, "ok"], [2, "bad\x00"]]})
    assert is_error and text == ("Error [INVALID_ARGUMENT]: bound_echo: parameter 'value.rows[1][1]': "
                                 "contains a NUL character at position 3, which cannot be stored")
    assert call(rt, "bound_raw", code="a\x0cb\x1b")[:2] == ('{"chars":4}', False)
    # the declared maximum of a parameter wins over the output cap (1000 here, 200,000 in the world)
    assert not call(rt, "bound_echo", short="x" * 2000)[1]
    text, is_error, _ = call(rt, "bound_echo", number="9223372036854775808")  # coerced from text
    assert is_error and "parameter 'number'" in text and "out of range" in text

    async def over_mcp() -> str:
        async with Client(rt.app) as client:
            result = await client.call_tool("bound_echo", {"value": ["\ud800"]}, raise_on_error=False)
            return str(result.content[0].text)

    assert asyncio.run(over_mcp()).startswith(
        "Error [INVALID_ARGUMENT]: bound_echo: parameter 'value[0]': contains an unpaired surrogate")


def test_a_call_over_its_time_is_stopped_and_rolled_back(rt: ServerRuntime) -> None:
    before = snapshot.take(rt.world, snapshot.Rules({}))
    text, is_error, seconds = call(rt, "bound_spin")
    assert is_error and text.startswith("Error [DEADLINE_EXCEEDED]: bound_spin: the call took longer than 0.3 s")
    assert seconds < 2
    assert snapshot.changes(rt.world, before, snapshot.Rules({})) == []
    text, is_error, seconds = call(rt, "bound_slow_sql")
    assert is_error and text.startswith("Error [DEADLINE_EXCEEDED]: bound_slow_sql: ") and seconds < 2
    assert call(rt, "bound_echo", value=1)[:2] == ('{"value":1,"short":null,"number":null}', False)
    assert call(rt, "bound_own_clock")[:2] == ("done", False)


def test_a_call_over_its_memory_is_stopped(rt: ServerRuntime) -> None:
    rt = ServerRuntime(toolbox, rt.world, {"max_call_seconds": 30, "max_call_memory_mb": 64})
    text, is_error, seconds = call(rt, "bound_hog")
    assert is_error and text.startswith("Error [RESOURCE_EXHAUSTED]: bound_hog: the call needed more than 64 MiB")
    assert seconds < 10
    assert not call(rt, "bound_echo", value=1)[1]


def test_memory_and_recursion_errors_are_error_results(rt: ServerRuntime) -> None:
    text, is_error, _ = call(rt, "bound_out_of_memory")
    assert is_error and text.startswith("Error [RESOURCE_EXHAUSTED]: bound_out_of_memory: the call ran out of memory")
    text, is_error, _ = call(rt, "bound_recurse")
    assert is_error and text.startswith("Error [RESOURCE_EXHAUSTED]: bound_recurse: the call ran out of nesting depth")


def test_error_texts_obey_the_output_cap(rt: ServerRuntime) -> None:
    text, is_error, _ = call(rt, "bound_long_error")
    assert is_error and len(text) <= 1000 and text.endswith("\nHint: list the things first")
    assert "…[truncated " in text
    text, is_error, _ = call(rt, "x" * 50_000)
    assert is_error and text == f"Error [NOT_FOUND]: {'x' * 64}…: unknown tool '{'x' * 64}…'"
    text, is_error, _ = call(rt, "bound_echo", **{"y" * 300: 1})
    assert is_error and len(text) <= 1000 and "a parameter name: 300 characters" in text


def test_cap_error_keeps_short_texts_and_cuts_long_ones() -> None:
    assert cap_error("Error [X]: t: short", 100) == "Error [X]: t: short"
    long = "Error [X]: t: " + "m" * 500 + "\nHint: " + "h" * 400
    assert len(cap_error(long, 300)) <= 300 and "Hint" not in cap_error(long, 300)
