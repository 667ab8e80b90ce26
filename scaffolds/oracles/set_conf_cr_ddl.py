"""Scripted agents of set_conf_cr_ddl: the oracle (solves through the tools only) and its
failure-mode mutants, each one knob away from the oracle."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, timezone, tzinfo
from typing import Any
from zoneinfo import ZoneInfo

from envs.set_conf_cr_ddl import ANSWER_KEY, AOE_OFFSET, EVENTS, FIRST_PAGE, LEAD, LENGTH, read_everything
from loca.core.clock import iso_z
from loca.core.script import Mutant, Script, ScriptedAgents, ToolRequest, Tools, call, call_all


@dataclass(frozen=True)
class Knobs:
    """How an agent deviates from the oracle (all off: the oracle)."""

    first_page_only: bool = False  # reads only the inbox's first page
    pre_extension: bool = False  # M1: keeps the first announced deadline
    at_deadline: bool = False  # M2: starts the event at the deadline
    aoe_as_utc: bool = False  # M3: reads AoE as UTC
    every_conference: bool = False  # M4: an event for every conference announcing a deadline
    other_track: bool = False  # M5: takes another track's deadline where there is one
    short_title: bool = False  # "<ACRONYM> camera-ready", without "deadline"
    naive_times: bool = False  # UTC wall times without an offset
    touch_existing: bool = False  # also edits an event the calendar already had


# ------------------------------------------------------------------ reading deadlines

WHEN = re.compile(
    r"(?:[A-Z][a-z]+day, )?"
    r"(?:(?P<month>[A-Z][a-z]{2,8}) (?P<day>\d{1,2}), (?P<year>\d{4})"
    r"|(?P<day2>\d{1,2}) (?P<month2>[A-Z][a-z]{2,8}) (?P<year2>\d{4})"
    r"|(?P<iso>\d{4}-\d{2}-\d{2}))"
    r"(?:,| at) (?P<hour>\d{1,2}):(?P<minute>\d{2})(?: (?P<half>AM|PM))? "
    r"(?P<zone>AoE|Anywhere on Earth|\(?(?:UTC|GMT)(?:[+\-\u2212]\d{1,2}(?::\d{2})?)?\)?"
    r"|\(?[A-Z][A-Za-z_]+/[A-Za-z_]+\)?)")
TRACK = re.compile(r"\b((?:[A-Z][a-z]+ )(?:(?:and|[A-Z][a-z]+) )*Track)\b")
_MONTHS = {m: i for i, m in enumerate(["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug",
                                        "sep", "oct", "nov", "dec"], start=1)}
_LABEL = re.compile(r"\b([A-Z]{2,6}) 20\d\d\b")


def zone_of(text: str, aoe_as_utc: bool = False) -> tzinfo:
    """The time zone a deadline names: AoE (UTC-12), UTC/GMT with an optional offset, or an
    IANA name."""
    name = text.strip("()")
    if name in ("AoE", "Anywhere on Earth"):
        return UTC if aoe_as_utc else timezone(AOE_OFFSET)
    found = re.fullmatch(r"(?:UTC|GMT)(?:([+\-\u2212])(\d{1,2})(?::(\d{2}))?)?", name)
    if found:
        sign, hours, minutes = found.groups()
        if sign is None:
            return UTC
        offset = timedelta(hours=int(hours), minutes=int(minutes or 0))
        return timezone(offset if sign == "+" else -offset)
    return ZoneInfo(name)


def parse_when(found: re.Match[str], aoe_as_utc: bool = False) -> datetime:
    """The UTC instant of one deadline match of `WHEN`."""
    g = found.groupdict()
    if g["iso"]:
        year, month, day = (int(p) for p in g["iso"].split("-"))
    else:
        year, day = int(g["year"] or g["year2"]), int(g["day"] or g["day2"])
        month = _MONTHS[(g["month"] or g["month2"])[:3].lower()]
    hour = int(g["hour"])
    if g["half"]:
        hour = hour % 12 + (12 if g["half"] == "PM" else 0)
    local = datetime(year, month, day, hour, int(g["minute"]), tzinfo=zone_of(g["zone"], aoe_as_utc))
    return local.astimezone(UTC)


def statements(body: str, aoe_as_utc: bool = False) -> list[tuple[str, datetime]]:
    """(track, deadline) of every camera-ready deadline an e-mail states: a line naming the
    camera-ready deadline of a track, or an item "- <track>: <deadline>" of a list introduced
    by a line about camera-ready deadlines. The first deadline of a line is the one it
    states (an old one may follow it)."""
    found = []
    in_list = False
    for line in body.splitlines():
        lowered = line.lower()
        if not line.strip():
            in_list = False
            continue
        if "camera-ready" in lowered and line.rstrip().endswith(":"):
            in_list = True
            continue
        track, when = TRACK.search(line), WHEN.search(line)
        if track and when and ("camera-ready" in lowered or (in_list and line.startswith("- "))):
            found.append((track.group(1), parse_when(when, aoe_as_utc)))
    return found


_WORD = re.compile(r"[A-Za-z0-9]+")


def _names(subject: str, acronyms: set[str], others: list[str]) -> list[str]:
    """The acronyms `subject` names as whole words: those made of letters and digits by a
    lookup per word (thousands of acronyms and e-mails in a large world), the rest searched."""
    return ([w for w in dict.fromkeys(_WORD.findall(subject)) if w in acronyms]
            + [a for a in others if re.search(rf"(?<![A-Za-z0-9]){re.escape(a)}(?![A-Za-z0-9])", subject)])


def deadlines(emails: list[dict[str, Any]], acronyms: list[str],
              knobs: Knobs) -> dict[tuple[str, str], datetime]:
    """The deadline of each (acronym, track) the e-mails state for a conference in `acronyms`
    (found as a whole word of the subject): the most recently sent statement, or with
    `pre_extension` the first."""
    latest: dict[tuple[str, str], datetime] = {}
    words = {a for a in acronyms if _WORD.fullmatch(a)}
    others = [a for a in dict.fromkeys(acronyms) if a not in words]
    ordered = sorted(emails, key=lambda m: (m["date"], int(m["id"])), reverse=knobs.pre_extension)
    for mail in ordered:
        for acronym in _names(mail["subject"], words, others):
            for track, moment in statements(mail["body"], knobs.aoe_as_utc):
                latest[(acronym, track)] = moment
    return latest


# ------------------------------------------------------------------ the agent

def _lines(text: str) -> list[tuple[str, str]]:
    pairs = []
    for line in text.splitlines():
        found = re.fullmatch(r"\s*(\S+) \((.+)\)\s*", line)
        if found:
            pairs.append((found.group(1), found.group(2)))
    return pairs


def _event(acronym: str, track: str, deadline: datetime, knobs: Knobs) -> dict[str, str]:
    start = deadline if knobs.at_deadline else deadline - LEAD
    title = EVENTS.title.format(acronym=acronym)
    if knobs.short_title:
        title = title.removesuffix(" deadline")
    return {"acronym": acronym, "track": track, "title": title, "deadline": iso_z(deadline),
            "start": iso_z(start), "end": iso_z(start + LENGTH)}


def derive(instruction: str, tools: Tools, knobs: Knobs) -> Script:
    """Read the conference list and the whole inbox; the events to create (the answer)."""
    size = FIRST_PAGE if knobs.first_page_only else 50
    info, emails = yield from read_everything(tools, page_size=size, first_page_only=knobs.first_page_only)
    wanted = _lines(info)
    acronyms = [a for a, _ in wanted]
    if knobs.every_conference:
        acronyms = sorted({a for m in emails for a in _LABEL.findall(m["subject"])} | set(acronyms))
    found = deadlines(emails, acronyms, knobs)
    if knobs.every_conference:
        listed = set(acronyms) - {a for a, _ in wanted}
        wanted += sorted({(a, t) for a, t in found if a in listed})
    events = []
    for acronym, track in wanted:
        others = [t for a, t in found if a == acronym and t != track]
        if knobs.other_track and others:
            track = others[0]
        if (acronym, track) in found:
            events.append(_event(acronym, track, found[(acronym, track)], knobs))
    return {ANSWER_KEY: events}


def _time(stamp: str, knobs: Knobs) -> dict[str, str]:
    return {"dateTime": stamp.removesuffix("Z") if knobs.naive_times else stamp.replace("Z", "+00:00")}


def write(instruction: str, tools: Tools, answer: dict[str, Any], knobs: Knobs) -> Script:
    """Create the events, all in one turn."""
    requests = [ToolRequest(tools("calendar", "create_event"), {
        "summary": e["title"], "start": _time(e["start"], knobs), "end": _time(e["end"], knobs)})
        for e in answer[ANSWER_KEY]]
    created = {event["id"] for event in (yield from call_all(requests))}
    if knobs.touch_existing:
        listed = yield from call(tools("calendar", "list_events"), {
            "timeMin": "2000-01-01T00:00:00Z", "timeMax": "2100-01-01T00:00:00Z"})
        existing = next(e["id"] for e in listed["items"] if e["id"] not in created)
        yield from call(tools("calendar", "update_event"), {"eventId": existing, "location": "Conference room"})


AGENTS = ScriptedAgents(
    derive=derive,
    write=write,
    oracle=Knobs(),
    mutants={
        "pre_extension": Mutant(Knobs(pre_extension=True), "times"),
        "start_at_deadline": Mutant(Knobs(at_deadline=True), "times"),
        "aoe_as_utc": Mutant(Knobs(aoe_as_utc=True), "times"),
        "every_conference": Mutant(Knobs(every_conference=True), "event_set"),
        "other_track": Mutant(Knobs(other_track=True), "times"),
        "first_page": Mutant(Knobs(first_page_only=True), "event_set"),
        "short_title": Mutant(Knobs(short_title=True), "titles"),
        "naive_times": Mutant(Knobs(naive_times=True), "times"),
        "edits_existing": Mutant(Knobs(touch_existing=True), "no_side_effects"),
    },
    noop_must_fail="event_set",
)
