"""canvas_arrange_exam: build the remaining final-exam timetable from Canvas announcements and
instructor e-mails into `exam_schedule.xlsx`."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from loca.core.outputs import Column, TableFile
from loca.core.script import Script, Tools, Turn, paged
from loca.core.task import Scale, TaskSpec

if TYPE_CHECKING:
    from loca.core.world import World

SCHEDULE = TableFile(
    file="exam_schedule.xlsx",
    sheet="Sheet1",
    columns=(
        Column("Course Code", "Si"), Column("Course Name", "Si"), Column("Proctor Name", "Si"),
        Column("Proctor Email", "E"), Column("Open-book/Closed-book", "Si"),
        Column("Final Date (MM/DD/YYYY)", "date"), Column("Start Time (HH:MM)", "time"),
        Column("Duration (minutes)", "I"), Column("Location", "Si"),
        Column("Information Source(Announcement/Email/Message)", "Si"), Column("Course Credit", "I"),
    ),
    key=("Course Code",),
)
TBD = "TBD"
# The pagination trap: a key e-mail and course lie beyond the first page of this size, the
# smallest page the oracle asks for (its first-page mutant reads only that page).
TRAP_PAGE = 10

INSTRUCTION = """\
Today is {today}; all times are local campus time. You are logged in to Canvas and to my mailbox. \
The final-exam details of each of my courses were published either as a Canvas announcement in that \
course or in an e-mail from its instructor; a later correction in the same channel replaces earlier \
details. Fill `{file}` in the workspace with one row per final exam I still have to take. Do not \
rename the file; keep the sheet and its 11 header cells as they are. Include every Canvas course I am \
enrolled in, except courses that announce no final exam, courses where I was told I am exempt from \
the final, and finals dated before today. Columns: Course Code and Course Name without the trailing \
section suffix `-<number>`; Proctor Name = the instructor's full name as shown in Canvas; Proctor \
Email = the instructor's e-mail; Open-book/Closed-book = `Open-book` or `Closed-book`; Final Date as \
`MM/DD/YYYY`; Start Time as 24-hour `HH:MM`; Duration (minutes) as an integer; Location exactly as \
announced; Information Source = `Announcement` or `Email`; Course Credit = the integer credits \
stated in the course's welcome announcement. Write `TBD` in any cell whose value has not been \
released. Sort by Final Date, then Start Time, earliest first; rows whose date is `TBD` come last, \
ordered by Course Code. Change nothing else."""


def instruction(world: World) -> str:
    local = world.clock.local(world.clock.at(0))
    today = f"{local:%A}, {local:%B} {local.day}, {local.year}"
    return INSTRUCTION.format(today=today, file=SCHEDULE.file)


def read_everything(tools: Tools, per_page: int = 100, page_size: int = 50, first_page_only: bool = False,
                    read_mail: bool = True) -> Turn:
    """The read set: every enrolled course, every announcement of each, every inbox e-mail.
    Returns (courses, announcements by course id, e-mails)."""
    [courses] = yield from paged(tools("canvas", "canvas_list_courses"), [{}], "items", "per_page",
                                 per_page, first_page_only)
    by_course = yield from paged(tools("canvas", "canvas_list_announcements"),
                                 [{"course_id": c["id"]} for c in courses], "items", "per_page",
                                 per_page, first_page_only)
    emails: list[Any] = []
    if read_mail:
        [emails] = yield from paged(tools("email", "get_emails"), [{"folder": "INBOX"}], "emails",
                                    "page_size", page_size, first_page_only)
    return courses, {c["id"]: a for c, a in zip(courses, by_course, strict=True)}, emails


def read_set(_instruction: str, tools: list[dict[str, Any]]) -> Script:
    yield from read_everything(Tools(tools))


TASK = TaskSpec(
    name="canvas_arrange_exam",
    version=0,
    summary="final-exam timetable from Canvas announcements and e-mails into a sheet",
    servers={"canvas": "canvas", "email": "email", "excel": "excel", "filesystem": "filesystem",
             "python_execute": "python_execute", "memory": "memory", "claim_done": "claim_done"},
    # Each course costs the agent one listing call (the agent loop allows 500 calls), so courses
    # stop at 400; the longer tiers grow by notes (`num_notes`), which share that listing.
    scale=Scale(primary="num_courses", lo=6, hi=400, fine="num_notes"),
    instruction=instruction,
    read_set=read_set,
    outputs=(SCHEDULE,),
    tools=(("canvas", "canvas_get_current_user"), ("canvas", "canvas_list_courses"),
           ("canvas", "canvas_get_course"), ("canvas", "canvas_list_announcements"),
           ("email", "get_emails"), ("email", "search_emails"), ("email", "read_email"),
           ("excel", "get_workbook_metadata"), ("excel", "read_data_from_excel"),
           ("excel", "write_data_to_excel"), ("filesystem", "list_directory"),
           ("python_execute", "python_execute"), ("memory", "read_graph"), ("memory", "search_nodes"),
           ("memory", "open_nodes")),
)
