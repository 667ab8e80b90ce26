"""Scripted agents of canvas_arrange_exam: the oracle (solves through the tools only) and its
failure-mode mutants, each one knob away from the oracle."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from typing import Any

from envs.canvas_arrange_exam import SCHEDULE, TBD, TRAP_PAGE, read_everything
from loca.core.script import Mutant, Script, ScriptedAgents, Tools, call

SUFFIX = re.compile(r"-\d+$")


@dataclass(frozen=True)
class Knobs:
    """How an agent deviates from the oracle (all off: the oracle)."""

    first_page_only: bool = False  # M1: never asks for page 2
    read_mail: bool = True  # M2: ignores the mailbox
    apply_corrections: bool = True  # M3: keeps pre-correction details
    fill_tbd_location_with_midterm: bool = False  # M4
    sort_by_code: bool = False  # M5
    rename_first_header: bool = False  # writes "Course" over "Course Code"
    perturb_duration: bool = False  # one value off by 15 minutes
    include_other_courses: bool = False  # rows for exam mails of courses I do not take
    send_schedule: bool = False  # also e-mails the schedule to myself (a side effect)


@dataclass
class Exam:
    date: date | None = None
    date_tbd: bool = False
    time: str | None = None
    duration: int | None = None
    location: str | None = None
    source: str = ""


@dataclass
class CourseNotes:
    code: str
    name: str
    proctor: tuple[str, str]
    credits: int | None = None
    exam_type: str | None = None
    no_final: bool = False
    exempt: bool = False
    exam: Exam | None = None
    midterm_location: str | None = None
    corrections: list[dict[str, str]] = field(default_factory=list)


# ------------------------------------------------------------------ parsing of published text

def _field(text: str, label: str) -> str | None:
    match = re.search(rf"{label}: ([^;\n]+)", text)
    return match.group(1).strip() if match else None


def parse_date(text: str) -> date | None:
    if text.upper().startswith(TBD):
        return None
    for fmt in ("%A, %B %d, %Y", "%b %d, %Y", "%Y-%m-%d"):
        try:
            return datetime.strptime(text, fmt).date()
        except ValueError:
            continue
    raise ValueError(f"unreadable date {text!r}")


def parse_time(text: str) -> str | None:
    if text.upper().startswith(TBD):
        return None
    for fmt in ("%H:%M", "%I:%M %p"):
        try:
            return datetime.strptime(text, fmt).strftime("%H:%M")
        except ValueError:
            continue
    raise ValueError(f"unreadable time {text!r}")


def parse_duration(text: str) -> int:
    match = re.fullmatch(r"(\d+(?:\.\d+)?) (minutes|hours?)", text)
    if not match:
        raise ValueError(f"unreadable duration {text!r}")
    value = float(match.group(1))
    return int(round(value * 60 if match.group(2).startswith("hour") else value))


def parse_location(text: str) -> str | None:
    return None if text.upper().startswith(TBD) else text


def parse_exam(text: str, source: str) -> Exam:
    day_text = _field(text, "Date") or ""
    return Exam(date=parse_date(day_text), date_tbd=day_text.upper().startswith(TBD),
                time=parse_time(_field(text, "Start time") or ""),
                duration=parse_duration(_field(text, "Duration") or ""),
                location=parse_location(_field(text, "Location") or ""), source=source)


def parse_changes(text: str) -> dict[str, str]:
    changes = {}
    for key, label in (("time", "New start time"), ("location", "New location")):
        value = _field(text, label)
        if value is not None:
            changes[key] = value
    return changes


def apply_changes(exam: Exam, changes: dict[str, str]) -> Exam:
    if "time" in changes:
        exam = replace(exam, time=parse_time(changes["time"]))
    if "location" in changes:
        exam = replace(exam, location=parse_location(changes["location"]))
    return exam


# ------------------------------------------------------------------ the agent

def _notes(course: dict[str, Any], announcements: list[dict[str, Any]], knobs: Knobs) -> CourseNotes:
    teacher = course["teachers"][0]
    notes = CourseNotes(SUFFIX.sub("", course["course_code"]), SUFFIX.sub("", course["name"]),
                        (teacher["name"], teacher["email"]))
    for topic in sorted(announcements, key=lambda t: (t["posted_at"], t["id"])):
        title, text = topic["title"], topic["message"]
        if title.startswith("Welcome to"):
            credits = re.search(r"(\d)[- ]credit|Course credit: (\d)|carries (\d) credit", text)
            notes.credits = int(next(g for g in credits.groups() if g)) if credits else None
            kind = re.search(r"(open|closed)-book", text)
            notes.exam_type = f"{kind.group(1).capitalize()}-book" if kind else None
        elif title.startswith("Final exam details"):
            notes.exam = parse_exam(text, "Announcement")
        elif title.startswith("Correction"):
            if knobs.apply_corrections and notes.exam:
                notes.exam = apply_changes(notes.exam, parse_changes(text))
        elif title.startswith("No final exam"):
            notes.no_final = True
        elif title.startswith("Midterm exam"):
            notes.midterm_location = _field(text, "Location")
    return notes


def _apply_mail(by_code: dict[str, CourseNotes], emails: list[dict[str, Any]], knobs: Knobs,
                others: list[list[Any]]) -> None:
    for mail in sorted(emails, key=lambda m: (m["date"], int(m["id"]))):
        subject = mail["subject"]
        codes = re.findall(r"\b[A-Z]{2,4}\d{3}-\d+\b", subject)
        if not codes or "final exam" not in subject.lower():
            continue
        notes = by_code.get(codes[0])
        if notes is None:
            if knobs.include_other_courses:
                exam = parse_exam(mail["body"], "Email")
                name = re.search(r"\(([^)]+)\)", mail["body"])
                others.append([SUFFIX.sub("", codes[0]), name.group(1) if name else "",
                               mail["from"], mail["from"], "Closed-book",
                               exam.date.strftime("%m/%d/%Y") if exam.date else TBD,
                               exam.time or TBD, exam.duration, exam.location or TBD, "Email", 3])
            continue
        if "exemption" in subject.lower():
            notes.exempt = True
        elif subject.startswith("Correction"):
            if knobs.apply_corrections and notes.exam:
                notes.exam = apply_changes(notes.exam, parse_changes(mail["body"]))
        else:
            notes.exam = parse_exam(mail["body"], "Email")


def _row(notes: CourseNotes, knobs: Knobs) -> list[Any]:
    exam = notes.exam
    assert exam is not None
    location = exam.location
    if location is None and knobs.fill_tbd_location_with_midterm:
        location = notes.midterm_location
    return [notes.code, notes.name, notes.proctor[0], notes.proctor[1], notes.exam_type or TBD,
            exam.date.strftime("%m/%d/%Y") if exam.date else TBD, exam.time or TBD,
            exam.duration, location or TBD, exam.source, notes.credits]


def _today(instruction: str) -> date:
    match = re.search(r"Today is ([A-Za-z]+, [A-Za-z]+ \d+, \d{4})", instruction)
    if not match:
        raise ValueError("the instruction does not state today's date")
    return datetime.strptime(match.group(1), "%A, %B %d, %Y").date()


def derive(instruction: str, tools: Tools, knobs: Knobs) -> Script:
    """Read everything and compute the rows (the answer), in sheet order."""
    today = _today(instruction)
    page = TRAP_PAGE if knobs.first_page_only else None
    courses, announcements, emails = yield from read_everything(
        tools, per_page=page or 100, page_size=page or 50,
        first_page_only=knobs.first_page_only, read_mail=knobs.read_mail)
    by_code = {}
    for course in courses:
        by_code[course["course_code"]] = _notes(course, announcements[course["id"]], knobs)
    others: list[list[Any]] = []
    _apply_mail(by_code, emails, knobs, others)
    rows = [_row(n, knobs) for n in by_code.values()
            if n.exam and not n.no_final and not n.exempt and not (n.exam.date and n.exam.date < today)]
    rows += others
    if knobs.perturb_duration and rows:
        rows[0][7] += 15
    dated = sorted((r for r in rows if r[5] != TBD),
                   key=lambda r: (datetime.strptime(r[5], "%m/%d/%Y"), r[6]))
    rows = dated + sorted((r for r in rows if r[5] == TBD), key=lambda r: r[0])
    if knobs.sort_by_code:
        rows.sort(key=lambda r: r[0])
    return {SCHEDULE.file: [dict(zip(SCHEDULE.headers, r, strict=True)) for r in rows]}


def write(instruction: str, tools: Tools, answer: dict[str, Any], knobs: Knobs) -> Script:
    """Fill the sheet below its header row."""
    meta = yield from call(tools("excel", "get_workbook_metadata"), {"filepath": SCHEDULE.file})
    sheet = meta["sheets"][0]["name"]
    rows = [[r[h] for h in SCHEDULE.headers] for r in answer[SCHEDULE.file]]
    if rows:
        yield from call(tools("excel", "write_data_to_excel"), {
            "filepath": SCHEDULE.file, "sheet_name": sheet, "data": rows, "start_cell": "A2"})
    if knobs.rename_first_header:
        yield from call(tools("excel", "write_data_to_excel"), {
            "filepath": SCHEDULE.file, "sheet_name": sheet, "data": [["Course"]], "start_cell": "A1"})
    if knobs.send_schedule:
        me = yield from call(tools("canvas", "canvas_get_current_user"), {})
        yield from call(tools("email", "send_email"), {
            "to": me["email"], "subject": "My exam schedule", "body": f"{len(rows)} finals to go."})


AGENTS = ScriptedAgents(
    derive=derive,
    write=write,
    oracle=Knobs(),
    mutants={
        "first_page": Mutant(Knobs(first_page_only=True), "row_keys"),
        "ignore_email": Mutant(Knobs(read_mail=False), "row_keys"),
        "stale_correction": Mutant(Knobs(apply_corrections=False), "values"),
        "midterm_location": Mutant(Knobs(fill_tbd_location_with_midterm=True), "values"),
        "sort_by_code": Mutant(Knobs(sort_by_code=True), "order"),
        "renamed_column": Mutant(Knobs(rename_first_header=True), "file_header"),
        "perturbed_value": Mutant(Knobs(perturb_duration=True), "values"),
        "extra_row": Mutant(Knobs(include_other_courses=True), "row_keys"),
        "sends_mail": Mutant(Knobs(send_schedule=True), "no_side_effects"),
    },
    noop_must_fail="row_keys",
)
