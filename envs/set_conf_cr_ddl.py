"""set_conf_cr_ddl: resolve each listed conference track's final camera-ready deadline from a
noisy mailbox and create an exact calendar reminder for it."""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING, Any

from loca.core.outputs import NewEvents
from loca.core.script import Script, Tools, call, paged
from loca.core.task import Scale, TaskSpec

if TYPE_CHECKING:
    from loca.core.world import World

INFO_FILE = "conference_info.txt"
EVENTS = NewEvents(title="{acronym} camera-ready deadline")
ANSWER_KEY = "events"  # truth.json answer entry: one expected event per line of INFO_FILE
LEAD = timedelta(hours=3)  # an event starts this long before its deadline
LENGTH = timedelta(minutes=30)
AOE_OFFSET = timedelta(hours=-12)  # Anywhere on Earth
# The pagination trap: the final deadline e-mails of one target lie beyond the first page of the
# inbox at get_emails' default page size (its first-page mutant reads only that page).
FIRST_PAGE = 20

INSTRUCTION = """\
The conferences I care about are listed in `{file}` in the workspace, one per line as \
`ACRONYM (track)`. For each line, find in my mailbox (you are logged in) the camera-ready \
deadline of that conference and track. When a later e-mail extends or corrects a deadline, the \
most recently sent e-mail wins; deadlines of other tracks or other conferences do not count. \
Deadlines are stated with a time zone (AoE, Anywhere on Earth, means UTC−12). For each line \
create exactly one event in my calendar titled `{title}`, starting exactly 3 hours before \
the deadline and ending 30 minutes later, with times given with an explicit UTC offset (for \
example 2025-10-03T20:59:00-12:00). Create no other events and do not modify existing ones. \
Change nothing else."""


def instruction(world: World) -> str:
    return INSTRUCTION.format(file=INFO_FILE, title=EVENTS.title.format(acronym="<ACRONYM>"))


def read_everything(tools: Tools, page_size: int = 50, first_page_only: bool = False) -> Script:
    """The read set: the list of conferences and every inbox e-mail, all pages (bodies
    included). Returns (the list file's text, the e-mails newest first)."""
    info = yield from call(tools("filesystem", "read_text_file"), {"path": INFO_FILE})
    [emails] = yield from paged(tools("email", "get_emails"), [{"folder": "INBOX"}], "emails",
                                "page_size", page_size, first_page_only)
    return str(info), emails


def read_set(_instruction: str, tools: list[dict[str, Any]]) -> Script:
    yield from read_everything(Tools(tools))


TASK = TaskSpec(
    name="set_conf_cr_ddl",
    version=0,
    summary="calendar reminders 3 h before each listed track's final camera-ready deadline",
    servers={"calendar": "calendar", "email": "email", "filesystem": "filesystem",
             "python_execute": "python_execute", "claim_done": "claim_done"},
    # Each target costs the agent a calendar call besides its share of the inbox pages, so
    # targets stop at the 256K tier's count (the agent loop allows 500 calls); the longer tiers
    # grow by everyday e-mails (`num_misc_emails`).
    scale=Scale(primary="num_target", lo=3, hi=134, fine="num_misc_emails"),
    instruction=instruction,
    read_set=read_set,
    outputs=(EVENTS,),
    tools=(("email", "get_emails"), ("email", "search_emails"), ("email", "read_email"),
           ("calendar", "create_event"), ("calendar", "list_events"),
           ("filesystem", "read_text_file"), ("filesystem", "list_directory"),
           ("python_execute", "python_execute")),
)
