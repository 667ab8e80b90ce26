"""course_assistant: join the NLP roster with a large inbox and e-mail every enrolled student who
has not submitted the final presentation."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from loca.core.credentials import parse_credentials
from loca.core.outputs import SentMail
from loca.core.script import Script, Tools, call, paged
from loca.core.task import Scale, TaskSpec

if TYPE_CHECKING:
    from loca.core.world import World

ROSTER_FILE = "nlp_statistics.xlsx"
ROSTER_SHEET = "NLP Course Students"
ROSTER_HEADERS = ("Name", "Student ID", "Email", "Status")
ENROLLED, DROPPED = "enrolled", "dropped"
CREDENTIALS_FILE = "email_account.txt"
SUBMISSION_PREFIX = "nlp-presentation-"
OTHER_COURSE_PREFIX = "cv-presentation-"
SUBMISSION_SUBJECT = re.compile(r"nlp-presentation-(\d{8})-(.+)")  # the whole subject
STUDENT_ID = r"(?<!\d)\d{8}(?!\d)"  # a Student ID as a message names it
REMINDER = SentMail(subject="nlp-course-emergency", mentions=STUDENT_ID)
MAIL = "mail"  # the answer's key: one entry {to, name, student_id} per e-mail, by Student ID
# The pagination trap: a submission lies beyond the first inbox page of this size (the default
# page size, which the first-page mutant reads).
TRAP_PAGE = 20
MAX_PAGE = 50

# The allow-list of `--tool-filter task`, one line per server: what a solution needs and what a
# careful agent reads with.
TOOLS: dict[str, tuple[str, ...]] = {
    "email": ("login", "get_emails", "search_emails", "read_email", "send_email"),
    "excel": ("get_workbook_metadata", "read_data_from_excel"),
    "filesystem": ("list_directory", "read_text_file"),
    "terminal": ("run_command",),
    "python_execute": ("python_execute",),
    "claim_done": ("claim_done",),
}

INSTRUCTION = """\
I am the TA of the NLP course. My mail credentials are in `{credentials}`; the roster is `{roster}` \
(Name, Student ID, Email, Status). A final-presentation submission is an e-mail in my inbox whose \
subject is `{prefix}<Student ID>-<Name>`; only the Student ID identifies the student, whoever sent \
it. Find every student with Status `{enrolled}` who has no submission and send each of them one \
e-mail, to their roster address only, with subject exactly `{subject}` and a body that contains \
their full name and Student ID as written in the roster. Do not e-mail anyone else. Change nothing \
else."""


def instruction(_world: World) -> str:
    return INSTRUCTION.format(credentials=CREDENTIALS_FILE, roster=ROSTER_FILE, prefix=SUBMISSION_PREFIX,
                              enrolled=ENROLLED, subject=REMINDER.subject)


def read_sheet(tools: Tools, filepath: str, sheet: str) -> Script:
    """Every row of a sheet, all pages."""
    rows: list[list[Any]] = []
    start = "A1"
    while True:
        page = yield from call(tools("excel", "read_data_from_excel"), {
            "filepath": filepath, "sheet_name": sheet, "start_cell": start, "max_cells": 20000})
        rows += page["values"]
        if not page["has_more"]:
            return rows
        start = page["next_start_cell"]


def read_everything(tools: Tools, page_size: int = MAX_PAGE, first_page_only: bool = False,
                    query: str | None = None) -> Script:
    """The read set: the credentials, the login, the roster (all pages) and the inbox (all
    pages; with `query`, only the e-mails a search for it finds). Returns (the login reply, the
    roster rows as dicts by header, the inbox e-mails)."""
    text = yield from call(tools("filesystem", "read_text_file"), {"path": CREDENTIALS_FILE})
    address, password = parse_credentials(text)
    me = yield from call(tools("email", "login"), {"email": address, "password": password})
    meta = yield from call(tools("excel", "get_workbook_metadata"), {"filepath": ROSTER_FILE})
    header, *rows = yield from read_sheet(tools, ROSTER_FILE, meta["sheets"][0]["name"])
    listing = (tools("email", "get_emails"), {"folder": "INBOX"}) if query is None else \
        (tools("email", "search_emails"), {"query": query, "folder": "INBOX"})
    [emails] = yield from paged(listing[0], [listing[1]], "emails", "page_size", page_size, first_page_only)
    return me, [dict(zip(header, row, strict=False)) for row in rows], emails


def read_set(_instruction: str, tools: list[dict[str, Any]]) -> Script:
    named = Tools(tools)
    yield from read_everything(named)
    yield from call(named("email", "logout"), {})  # leave the mailbox as the agent finds it


TASK = TaskSpec(
    name="course_assistant",
    version=0,
    summary="e-mail every enrolled student without a presentation submission in the inbox",
    servers={key: key for key in TOOLS},
    # A quarter of the students get a reminder, one send_email call each, so students stop at
    # the 256K tier's count (the agent loop allows 500 calls); the longer tiers grow by
    # distractor e-mails (`num_distractor_emails`).
    scale=Scale(primary="num_students", lo=20, hi=1380, fine="num_distractor_emails"),
    instruction=instruction,
    read_set=read_set,
    outputs=(REMINDER,),
    tools=tuple((key, tool) for key, names in TOOLS.items() for tool in names),
)
