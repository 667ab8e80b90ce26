"""canvas_list_test: list every quiz and assignment the student must still submit (deadline
after now, not submitted, course not waived by a score-based exemption) into two CSV files."""

from __future__ import annotations

from collections.abc import Generator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from loca.core.clock import iso_z
from loca.core.outputs import Column, TableFile
from loca.core.script import ToolReply, ToolRequest, Tools, paged, parse_reply
from loca.core.task import Scale, TaskSpec

if TYPE_CHECKING:
    from loca.core.world import World

DEADLINE = "deadline"
QUIZZES = TableFile(
    file="quiz_info.csv",
    columns=(
        Column("course_code"), Column("course_name"), Column("credits", "I"), Column("quiz_title"),
        Column("number_of_questions", "I"), Column("time_limit", "I"), Column("allowed_attempts", "I"),
        Column("scoring_policy"), Column("points_possible", "I"), Column(DEADLINE, "T"),
    ),
    key=("course_code", "quiz_title"),
)
ASSIGNMENTS = TableFile(
    file="assignment_info.csv",
    columns=(
        Column("course_code"), Column("course_name"), Column("assignment_title"), Column("description"),
        Column(DEADLINE, "T"), Column("points_possible", "I"),
    ),
    key=("course_code", "assignment_title"),
)
EXAMPLE = "(Example)"  # the example row of each file: its course_code ends with this
SCORE_NOTE = "exam score for {code}: {score}"  # one memory observation per exemption policy
# The first-page trap: the last course (by id) always holds an assignment to list, so reading
# only the first page of courses, at this page size or the default one, misses it.
TRAP_PAGE = 3
MAX_PAGE = 100

INSTRUCTION = """\
Now is {now}. My profile and my exam scores are in memory. Using Canvas, find every quiz and \
assignment in my courses that I have not submitted and whose deadline is after now. Some courses \
announce that students whose exam score meets a stated requirement are exempt from all remaining \
quizzes and assignments of that course; skip every item of a course where my score meets the \
requirement. Edit `{quizzes}` and `{assignments}` in the workspace in place (same names): keep their \
header rows exactly, delete the example rows, and write one row per item with values copied from \
Canvas: course_code and course_name exactly as in Canvas (section suffix included); quiz_title, \
assignment_title, description and scoring_policy verbatim; credits, number_of_questions, time_limit \
(minutes), allowed_attempts and points_possible as integers; deadline in UTC as \
`YYYY-MM-DDTHH:MM:SSZ`. Quote values as CSV requires (RFC 4180). Sort each file by deadline \
ascending, then course_code, then title. Change nothing else."""


def instruction(world: World) -> str:
    return INSTRUCTION.format(now=iso_z(world.clock.at(0)), quizzes=QUIZZES.file,
                              assignments=ASSIGNMENTS.file)


@dataclass
class Reads:
    """Everything the task needs, as the tools return it: the memory graph, my courses, and per
    course id its announcements, quizzes and assignments; my latest attempt per quiz id and my
    submission per assignment id."""

    graph: dict[str, Any]
    courses: list[dict[str, Any]]
    announcements: dict[int, list[dict[str, Any]]]
    quizzes: dict[int, list[dict[str, Any]]]
    assignments: dict[int, list[dict[str, Any]]]
    quiz_submissions: dict[int, dict[str, Any]]
    submissions: dict[int, dict[str, Any]]


ReadTurn = Generator["ToolRequest | list[ToolRequest]", list[ToolReply], Any]


def each(tool: str, arg_sets: list[dict[str, Any]]) -> ReadTurn:
    """One call per argument set, all in one turn; their JSON replies (each must succeed)."""
    if not arg_sets:
        return []
    replies = yield [ToolRequest(tool, args) for args in arg_sets]
    for reply in replies:
        if reply.is_error:
            raise RuntimeError(f"{tool} failed: {reply.text}")
    return [parse_reply(r) for r in replies]


def read_everything(tools: Tools, per_page: int = MAX_PAGE, first_page_only: bool = False) -> ReadTurn:
    """The read set: the memory graph; every course (all pages); per course its announcements,
    quizzes and assignments (all pages); my latest attempt at every quiz and my submission for
    every assignment."""
    [graph] = yield from each(tools("memory", "read_graph"), [{}])
    [courses] = yield from paged(tools("canvas", "canvas_list_courses"), [{}], "items", "per_page",
                                 per_page, first_page_only)
    ids = [c["id"] for c in courses]
    listed = {}
    for what in ("announcements", "quizzes", "assignments"):
        pages = yield from paged(tools("canvas", f"canvas_list_{what}"), [{"course_id": i} for i in ids],
                                 "items", "per_page", per_page)
        listed[what] = dict(zip(ids, pages, strict=True))
    quizzes = [q for i in ids for q in listed["quizzes"][i]]
    assignments = [a for i in ids for a in listed["assignments"][i]]
    attempts = yield from each(tools("canvas", "canvas_get_quiz_submission"),
                               [{"course_id": q["course_id"], "quiz_id": q["id"]} for q in quizzes])
    submissions = yield from each(tools("canvas", "canvas_get_submission"),
                                  [{"course_id": a["course_id"], "assignment_id": a["id"]} for a in assignments])
    return Reads(graph, courses, listed["announcements"], listed["quizzes"], listed["assignments"],
                 {q["id"]: s for q, s in zip(quizzes, attempts, strict=True)},
                 {a["id"]: s for a, s in zip(assignments, submissions, strict=True)})


def read_set(_instruction: str, tools: list[dict[str, Any]]) -> ReadTurn:
    yield from read_everything(Tools(tools))


TASK = TaskSpec(
    name="canvas_list_test",
    version=0,
    summary="open quizzes and assignments, minus exempted courses, into two CSV files",
    servers={"canvas": "canvas", "memory": "memory", "filesystem": "filesystem",
             "python_execute": "python_execute", "claim_done": "claim_done"},
    # Each course costs the agent about five tool calls, so courses stop at the 256K tier's count
    # (the agent loop allows 500 calls); the longer tiers grow by notes (`num_notes`), which
    # share the course's announcement listing.
    scale=Scale(primary="num_courses", lo=4, hi=76, fine="num_notes"),
    instruction=instruction,
    read_set=read_set,
    outputs=(QUIZZES, ASSIGNMENTS),
    tools=(("canvas", "canvas_get_current_user"), ("canvas", "canvas_list_courses"),
           ("canvas", "canvas_get_course"), ("canvas", "canvas_list_announcements"),
           ("canvas", "canvas_list_quizzes"), ("canvas", "canvas_get_quiz"),
           ("canvas", "canvas_get_quiz_submission"), ("canvas", "canvas_list_assignments"),
           ("canvas", "canvas_get_assignment"), ("canvas", "canvas_get_submission"),
           ("memory", "read_graph"), ("memory", "search_nodes"), ("memory", "open_nodes"),
           ("filesystem", "list_directory"), ("filesystem", "read_text_file"),
           ("filesystem", "write_file"), ("filesystem", "edit_file"),
           ("python_execute", "python_execute")),
)
