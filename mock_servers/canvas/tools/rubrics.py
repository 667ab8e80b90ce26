"""Canvas tools: rubrics of a course."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field

from mock_servers.canvas.domain.base import Listing, paged
from mock_servers.canvas.domain.courses import in_course
from mock_servers.canvas.domain.rubrics import RUBRICS, add_rubric, rubric_brief, rubric_view
from mock_servers.canvas.tools.common import (
    PAGE_SIZE,
    CourseId,
    Id,
    Page,
    PerPage,
    PointsValue,
    access,
    paged_list,
    staff_write,
    toolbox,
)
from mock_servers.core.toolkit import Call

MAX_CRITERIA = 50


class Rating(BaseModel):
    model_config = ConfigDict(extra="forbid")
    description: Annotated[str, Field(description="Level, e.g. 'Exceeds expectations'")]
    points: Annotated[PointsValue, Field(description="Points of the level (at most the criterion's)")]


class Criterion(BaseModel):
    model_config = ConfigDict(extra="forbid")
    description: Annotated[str, Field(description="What is judged")]
    long_description: Annotated[str | None, Field(description="Details")] = None
    points: Annotated[PointsValue, Field(description="Points the criterion is worth")]
    criterion_use_range: Annotated[bool | None, Field(description="Score ratings as ranges")] = None
    ratings: Annotated[list[Rating] | None, Field(
        max_length=20, description="Levels (default: full marks and no marks)")] = None


@toolbox.tool(rw="read")
@paged_list
def canvas_list_rubrics(call: Call, course_id: CourseId, page: Page = 1,
                        per_page: PerPage = PAGE_SIZE) -> dict[str, Any]:
    """Rubrics of a course by id: id, title, points_possible, criteria_count."""
    access(call, course_id)
    return paged(call.session, Listing(RUBRICS, "x.course_id = ?", "x.id", (course_id,)), page,
                 per_page, lambda rows: [rubric_brief(r) for r in rows])


@toolbox.tool(rw="read")
def canvas_get_rubric(
    call: Call,
    course_id: CourseId,
    rubric_id: Annotated[Id, Field(description="Rubric id (of that course)")],
) -> dict[str, Any]:
    """One rubric of a course with its criteria and their ratings."""
    rubric = in_course(call.session, RUBRICS, rubric_id, access(call, course_id), "rubric")
    return rubric_view(call.session, rubric)


@toolbox.tool(rw="write")
def canvas_create_rubric(
    call: Call,
    course_id: CourseId,
    title: Annotated[str, Field(description="Rubric title")],
    criteria: Annotated[list[Criterion], Field(min_length=1, max_length=MAX_CRITERIA,
                                               description="Criteria, in order")],
    description: Annotated[str | None, Field(description="Description")] = None,
    free_form_criterion_comments: Annotated[bool, Field(
        description="Graders write free-form comments instead of picking ratings")] = False,
    hide_score_total: Annotated[bool, Field(description="Hide the total from students")] = False,
) -> dict[str, Any]:
    """Create a rubric in a course you teach (teachers, TAs, admins); points_possible is the
    sum of its criteria's points."""
    staff_write(call, course_id, "create rubrics")
    rubric_id = add_rubric(call.session, course_id=course_id, title=title, description=description,
                           criteria=[c.model_dump() for c in criteria],
                           free_form_criterion_comments=free_form_criterion_comments,
                           hide_score_total=hide_score_total)
    rubric = in_course(call.session, RUBRICS, rubric_id, access(call, course_id), "rubric")
    return rubric_view(call.session, rubric)
