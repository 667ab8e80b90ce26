"""canvas_arrange_exam: build the remaining final-exam timetable from Canvas announcements and
instructor e-mails into `exam_schedule.xlsx`."""

from __future__ import annotations

import json
from collections.abc import Generator
from typing import Any

import checkers.canvas_arrange_exam as checker
import generators.canvas_arrange_exam as generator
from envs.base import LocaEnv
from loca.core.script import Script, ToolReply, ToolRequest, resolve_tool
from loca.core.world import World
from loca.registry import Scale, TaskSpec

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
    return INSTRUCTION.format(today=today, file=generator.OUTPUT_FILE)


def paged(tool: str, arg_sets: list[dict[str, Any]], items_key: str, size_key: str, size: int,
          first_page_only: bool = False) -> Generator[list[ToolRequest], list[ToolReply], list[list[Any]]]:
    """Every item of one paged listing per argument set (canvas `has_more` or e-mail
    `total_pages` envelopes). Each turn asks the next page of every unfinished listing at once,
    as parallel calls."""
    items: list[list[Any]] = [[] for _ in arg_sets]
    pending = list(range(len(arg_sets)))
    page = 1
    while pending:
        replies = yield [ToolRequest(tool, {**arg_sets[i], "page": page, size_key: size}) for i in pending]
        still = []
        for i, reply in zip(pending, replies, strict=True):
            if reply.is_error:
                raise RuntimeError(f"{tool} failed: {reply.text}")
            data = json.loads(reply.text)
            items[i].extend(data[items_key])
            more = data["has_more"] if "has_more" in data else page < data["total_pages"]
            if more and not first_page_only:
                still.append(i)
        pending, page = still, page + 1
    return items


def read_everything(tools: list[dict[str, Any]], per_page: int = 100, page_size: int = 50,
                    first_page_only: bool = False, read_mail: bool = True,
                    ) -> Generator[list[ToolRequest], list[ToolReply],
                                   tuple[list[Any], dict[int, list[Any]], list[Any]]]:
    """The read set: every enrolled course, every announcement of each, every inbox e-mail.
    Returns (courses, announcements by course id, e-mails)."""
    list_courses = resolve_tool(tools, "canvas", "canvas_list_courses")
    list_announcements = resolve_tool(tools, "canvas", "canvas_list_announcements")
    [courses] = yield from paged(list_courses, [{}], "items", "per_page", per_page, first_page_only)
    by_course = yield from paged(list_announcements, [{"course_id": c["id"]} for c in courses],
                                 "items", "per_page", per_page, first_page_only)
    emails: list[Any] = []
    if read_mail:
        get_emails = resolve_tool(tools, "email", "get_emails")
        [emails] = yield from paged(get_emails, [{"folder": "INBOX"}], "emails", "page_size",
                                    page_size, first_page_only)
    return courses, {c["id"]: a for c, a in zip(courses, by_course, strict=True)}, emails


def read_script(_instruction: str, tools: list[dict[str, Any]]) -> Script:
    """The read set as a script (the instruction is not needed to read everything)."""
    yield from read_everything(tools)


TASK = TaskSpec(
    name="canvas_arrange_exam",
    env_id="loca/CanvasArrangeExam-v0",
    version=0,
    servers={"canvas": "canvas", "email": "email", "excel": "excel", "filesystem": "filesystem",
             "claim_done": "claim_done"},
    generate=generator.generate,
    resolve_params=lambda params: generator.Params.model_validate(params).resolved(),
    generator_version=generator.GENERATOR_VERSION,
    check=checker.check,
    instruction=instruction,
    read_script=read_script,
    scale=Scale(primary="num_courses", lo=3, hi=400, fine="num_distractor_emails"),
)


class CanvasArrangeExamEnv(LocaEnv):
    task = TASK
