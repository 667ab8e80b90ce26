"""The script protocol shared by the env, scripted agents and the scaffold: one tool call and
what comes back from it; scripts (agents without a model) and the helpers they are written
with; a task's scripted agents declared as data."""

from __future__ import annotations

import json
from collections.abc import Callable, Generator, Mapping
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class ToolRequest:
    """One tool call; a `str` as arguments is sent raw (it may be invalid JSON)."""

    name: str
    arguments: Mapping[str, Any] | str = field(default_factory=dict)


@dataclass(frozen=True)
class ToolReply:
    """What a script receives for each call of its last turn, in call order."""

    text: str
    is_error: bool


# A scripted agent: yields one call, a list of calls (one turn) or a plain-text reply, and
# receives the replies of that turn.
Script = Generator["ToolRequest | list[ToolRequest] | str", "list[ToolReply]", Any]
ScriptFn = Callable[[str, list[dict[str, Any]]], Script]  # (instruction, tools) -> script




Turn = Generator[list[ToolRequest], list[ToolReply], Any]


class Tools:
    """The tool list a script was given; `tools(key, tool)` is the exposed name of server
    `key`'s `tool` under any naming mode (`<key>_<tool>` when prefixed, else the bare name)."""

    def __init__(self, tools: list[dict[str, Any]]) -> None:
        self.names = {t["name"] for t in tools}

    def __call__(self, key: str, tool: str) -> str:
        for candidate in (f"{key}_{tool}", tool):
            if candidate in self.names:
                return candidate
        raise KeyError(f"tool {tool} of server {key} is not exposed")


def call(name: str, arguments: Mapping[str, Any]) -> Generator[ToolRequest, list[ToolReply], Any]:
    """One call whose reply must succeed; its JSON (or text) comes back."""
    [reply] = yield ToolRequest(name, arguments)
    if reply.is_error:
        raise RuntimeError(f"{name} failed: {reply.text}")
    return parse_reply(reply)


TURN_CHARS = 40_000
"""At most this many characters of call arguments in one turn of `call_all` (about 10K tokens),
so a turn the agent loop must keep whole, its calls and their results, fits the input budget
beside the first request whatever the world's size."""


def call_all(requests: list[ToolRequest]) -> Turn:
    """Parallel calls that must all succeed, in as few turns as keep each turn's arguments
    within `TURN_CHARS` (none: no turn); their JSON (or text) comes back in order."""
    found: list[Any] = []
    for turn in _turns(requests):
        replies = yield turn
        for request, reply in zip(turn, replies, strict=True):
            if reply.is_error:
                raise RuntimeError(f"{request.name} failed: {reply.text}")
        found += [parse_reply(reply) for reply in replies]
    return found


def _turns(requests: list[ToolRequest]) -> Generator[list[ToolRequest], None, None]:
    turn: list[ToolRequest] = []
    size = 0
    for request in requests:
        chars = len(request.arguments if isinstance(request.arguments, str) else json.dumps(request.arguments))
        if turn and size + chars > TURN_CHARS:
            yield turn
            turn, size = [], 0
        turn.append(request)
        size += chars
    if turn:
        yield turn


def parse_reply(reply: ToolReply) -> Any:
    """A reply's JSON value, or its text when it is not JSON."""
    try:
        return json.loads(reply.text)
    except json.JSONDecodeError:
        return reply.text


def _more(data: Mapping[str, Any], page: int) -> bool:
    if "has_more" in data:
        return bool(data["has_more"])
    for key in ("total_pages", "totalPages"):
        if key in data:
            return page < int(data[key])
    raise KeyError(f"no paging fields in a reply with keys {sorted(data)}")


def _replied(tool: str, reply: ToolReply) -> Any:
    """The JSON of a listing page, which must have succeeded."""
    if reply.is_error:
        raise RuntimeError(f"{tool} failed: {reply.text}")
    return json.loads(reply.text)


def _pages(tool: str, arg_sets: list[dict[str, Any]], items_key: str,
           page_args: Callable[[int, list[Any]], dict[str, Any]],
           more: Callable[[Mapping[str, Any], int], bool]) -> Turn:
    """Every item of one listing per argument set: each turn asks the next page of every
    unfinished listing at once, as parallel calls. `page_args(page, items read so far)` are the
    paging arguments of a listing's next page (pages count from 1); `more(reply, page)` says
    whether another follows."""
    items: list[list[Any]] = [[] for _ in arg_sets]
    pending = list(range(len(arg_sets)))
    page = 1
    while pending:
        replies = yield [ToolRequest(tool, {**arg_sets[i], **page_args(page, items[i])}) for i in pending]
        still = []
        for i, reply in zip(pending, replies, strict=True):
            data = _replied(tool, reply)
            items[i].extend(data[items_key])
            if more(data, page):
                still.append(i)
        pending, page = still, page + 1
    return items


def paged(tool: str, arg_sets: list[dict[str, Any]], items_key: str, size_key: str, size: int,
          first_page_only: bool = False, page_key: str = "page") -> Turn:
    """Every item of one paged listing per argument set (envelopes with `has_more`,
    `total_pages` or `totalPages`), pages asked by number, in parallel across the sets."""
    return (yield from _pages(tool, arg_sets, items_key, lambda page, _items: {page_key: page, size_key: size},
                              lambda data, page: _more(data, page) and not first_page_only))


def paged_by_token(tool: str, args: dict[str, Any], items_key: str, size_key: str, size: int,
                   first_page_only: bool = False, token_key: str = "page_token",
                   next_key: str = "next_page_token") -> Turn:
    """Every item of one listing continued by page tokens (`next_key` of each reply, empty on
    the last page)."""
    items: list[Any] = []
    token = None
    while True:
        [reply] = yield [ToolRequest(tool, {**args, size_key: size, **({token_key: token} if token else {})})]
        data = _replied(tool, reply)
        items.extend(data[items_key])
        token = data.get(next_key)
        if not token or first_page_only:
            return items


def paged_by_offset(tool: str, arg_sets: list[dict[str, Any]], items_key: str, size_key: str, size: int,
                    offset_key: str = "start_index", more_key: str = "has_more") -> Turn:
    """Every item of one listing per argument set, paged by offset: each page starts after the
    items already read (a page cut short by an output cap included) while `more_key` says more
    follow; in parallel across the sets."""
    return (yield from _pages(tool, arg_sets, items_key,
                              lambda _page, items: {size_key: size, offset_key: len(items)},
                              lambda data, _page: bool(data[more_key])))


@dataclass(frozen=True)
class Mutant:
    """A failure mode: the oracle with `knobs` changed, and the check it must fail."""

    knobs: Any
    must_fail: str


@dataclass(frozen=True)
class ScriptedAgents:
    """A task's scripted agents, declared as data. `derive(instruction, tools, knobs)` reads
    through the tools only and returns the answer (for the oracle: exactly the generator's
    ground truth answer); `write(instruction, tools, answer, knobs)` writes it. The oracle is
    `derive` + `write` with `oracle` knobs, then claim_done; each mutant the same with its
    knobs; the no-op agent only claims done and must fail `noop_must_fail`."""

    derive: Callable[[str, Tools, Any], Script]
    write: Callable[[str, Tools, Any, Any], Script]
    oracle: Any
    mutants: Mapping[str, Mutant]
    noop_must_fail: str

    def names(self) -> list[str]:
        return ["oracle", "noop", *(f"mutant:{m}" for m in self.mutants)]

    def must_fail(self, agent: str) -> str | None:
        """The check `agent` must fail; None for the oracle."""
        if agent == "oracle":
            return None
        if agent == "noop":
            return self.noop_must_fail
        return self.mutants[agent.removeprefix("mutant:")].must_fail

    def script(self, agent: str) -> ScriptFn:
        if agent not in self.names():
            raise KeyError(f"unknown agent {agent!r}; scripted agents: {', '.join(self.names())}")
        if agent == "noop":
            return _claim_only
        knobs = self.oracle if agent == "oracle" else self.mutants[agent.removeprefix("mutant:")].knobs

        def solve(instruction: str, tools: list[dict[str, Any]]) -> Script:
            named = Tools(tools)
            answer = yield from self.derive(instruction, named, knobs)
            yield from self.write(instruction, named, answer, knobs)
            yield ToolRequest(named("claim_done", "claim_done"), {})

        return solve


def _claim_only(instruction: str, tools: list[dict[str, Any]]) -> Script:
    """The no-op agent: claims the task done at once."""
    yield ToolRequest(Tools(tools)("claim_done", "claim_done"), {})
