"""Checker of set_conf_cr_ddl: the events the agent created against the final camera-ready
deadlines, plus no side effects.

New events are matched to the listed conferences by the acronym as a whole word of the title
(case-insensitive). The calendar stores instants, so a time given without an offset has already
been read in the calendar's own zone (never UTC or AoE in these worlds) and fails `times` unless
it happened to be the right instant there."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from checkers.calendar import NewEvent, new_events
from checkers.kit import SHOWN, Checks, Context, judged
from checkers.normalize import Si
from checkers.side_effects import no_side_effects
from checkers.verdict import CheckFailed
from envs.set_conf_cr_ddl import ANSWER_KEY, EVENTS, LENGTH, TASK
from loca.core.clock import parse_instant

SLACK = timedelta(seconds=60)


@dataclass(frozen=True)
class Matching:
    """New events by the expected acronym their title names; those naming none or several."""

    by_acronym: dict[str, list[NewEvent]]
    unmatched: list[NewEvent]


_WORD = re.compile(r"[0-9a-z]+")


def _names(title: str, acronym: str) -> bool:
    return re.search(rf"(?<![0-9a-z]){re.escape(acronym.casefold())}(?![0-9a-z])", title.casefold()) is not None


def _named(title: str, by_word: dict[str, list[str]], others: list[str]) -> list[str]:
    """The expected acronyms `title` names: those made of letters and digits found among its
    words (a lookup per word, not a search per acronym: thousands of each in a large world),
    the rest searched."""
    return ([a for word in dict.fromkeys(_WORD.findall(title.casefold())) for a in by_word.get(word, ())]
            + [a for a in others if _names(title, a)])


def matching(ctx: Context) -> Matching:
    def match() -> Matching:
        expected = [e["acronym"] for e in ctx.answer(ANSWER_KEY)]
        found = Matching({a: [] for a in expected}, [])
        by_word: dict[str, list[str]] = {}
        for a in expected:
            if _WORD.fullmatch(a.casefold()):
                by_word.setdefault(a.casefold(), []).append(a)
        others = [a for a in expected if not _WORD.fullmatch(a.casefold())]
        for event in new_events(ctx):
            named = _named(event.summary, by_word, others)
            if len(named) == 1:
                found.by_acronym[named[0]].append(event)
            else:
                found.unmatched.append(event)
        return found

    result: Matching = ctx.memo(("matching",), match)
    return result


def _show(items: list[Any]) -> str:
    return f"{items[:SHOWN]}{' ...' if len(items) > SHOWN else ''} ({len(items)})"


def event_set(ctx: Context) -> str:
    """The new events map one-to-one to the listed conferences: none missing, none twice, none
    naming no listed acronym (or several)."""
    m = matching(ctx)
    missing = [a for a, events in m.by_acronym.items() if not events]
    twice = [a for a, events in m.by_acronym.items() if len(events) > 1]
    extra = [e.summary for e in m.unmatched]
    problems = [f"{what} {_show(items)}" for what, items in
                (("missing", missing), ("more than one event for", twice), ("extra", extra)) if items]
    if problems:
        raise CheckFailed("new events: " + "; ".join(problems))
    return f"{len(m.by_acronym)} new events, one per listed conference"


def _title_ok(title: str, acronym: str) -> bool:
    return Si(title).replace("camera ready", "camera-ready") == Si(EVENTS.title.format(acronym=acronym))


def titles(ctx: Context) -> str:
    """Each matched event is titled `<ACRONYM> camera-ready deadline` (`Si`; "camera ready"
    accepted)."""
    events = [(a, e) for a, found in matching(ctx).by_acronym.items() for e in found]
    wrong = [e.summary for a, e in events if not _title_ok(e.summary, a)]
    if wrong:
        raise CheckFailed(f"titles other than '{EVENTS.title}': {_show(wrong)}")
    judged(len(events), len(ctx.answer(ANSWER_KEY)), "events")
    return f"all {len(events)} matched titles are right"


def _time_problem(event: NewEvent, start: datetime) -> str | None:
    if event.start is None or event.end is None:
        return "is an all-day event"
    if abs(event.start - start) > SLACK:
        return f"starts {event.start:%Y-%m-%dT%H:%M:%SZ}, expected {start:%Y-%m-%dT%H:%M:%SZ}"
    if abs(event.end - event.start - LENGTH) > SLACK:
        return f"lasts {event.end - event.start}, expected {LENGTH}"
    return None


def times(ctx: Context) -> str:
    """Each matched event starts at its final deadline - 3 h and ends 30 min later (±60 s)."""
    expected = {e["acronym"]: parse_instant(e["start"]) for e in ctx.answer(ANSWER_KEY)}
    wrong, count = [], 0
    for acronym, found in matching(ctx).by_acronym.items():
        for event in found:
            count += 1
            problem = _time_problem(event, expected[acronym])
            if problem:
                wrong.append(f"{event.summary!r} {problem}")
    if wrong:
        raise CheckFailed(f"{len(wrong)} events at the wrong time: {'; '.join(wrong[:SHOWN])}"
                          + (" ..." if len(wrong) > SHOWN else ""))
    judged(count, len(expected), "events")
    return f"all {count} matched events start 3 h before their deadline and last 30 min"


CHECKS = Checks(
    TASK,
    event_set=event_set,
    titles=titles,
    times=times,
    no_side_effects=no_side_effects(TASK),
)
