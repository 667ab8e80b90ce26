"""Canvas rubrics: scoring criteria of a course, each with rated levels; a rubric is worth the
sum of its criteria."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from sqlmodel import Session

from mock_servers.canvas.domain.base import Table, points, text
from mock_servers.core import sql
from mock_servers.core.errors import invalid


class Rubric(NamedTuple):
    id: int
    course_id: int
    title: str
    description: str | None
    points_possible: float
    free_form_criterion_comments: int
    hide_score_total: int
    criteria_count: int


RUBRICS = Table(Rubric, "x.id, x.course_id, x.title, x.description, x.points_possible, "
                        "x.free_form_criterion_comments, x.hide_score_total, (SELECT count(*) "
                        "FROM canvas_rubric_criterion c WHERE c.rubric_id = x.id)", "canvas_rubric x")


def _ratings(criterion: Mapping[str, Any], worth: float) -> list[dict[str, Any]]:
    """The criterion's ratings, highest first; by default full marks and no marks."""
    given = criterion.get("ratings") or [{"description": "Full Marks", "points": worth},
                                         {"description": "No Marks", "points": 0.0}]
    ratings = []
    for r in given:
        value = points("rating points", r["points"])
        if value > worth:
            raise invalid(f"rating '{r['description']}' is worth {value:g}, more than its "
                          f"criterion's {worth:g} points")
        ratings.append({"description": text("rating description", r["description"]), "points": value})
    return sorted(ratings, key=lambda r: -r["points"])


def add_rubric(session: Session, *, course_id: int, title: str, criteria: Sequence[Mapping[str, Any]],
               description: str | None = None, free_form_criterion_comments: bool = False,
               hide_score_total: bool = False, id: int | None = None) -> int:
    """A rubric of the course from criteria `{description, long_description, points,
    criterion_use_range, ratings: [{description, points}]}`; returns its id."""
    if not criteria:
        raise invalid("a rubric needs at least one criterion")
    rows = []
    for position, c in enumerate(criteria, start=1):
        worth = points("criterion points", c["points"])
        rows.append((position, text("criterion description", c["description"]),
                     c.get("long_description"), worth, bool(c.get("criterion_use_range")),
                     json.dumps(_ratings(c, worth), ensure_ascii=False, separators=(",", ":"))))
    rubric_id = sql.scalar(session, "INSERT INTO canvas_rubric (id, course_id, title, description, "
                                    "points_possible, free_form_criterion_comments, hide_score_total) "
                                    "VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id",
                           (id, course_id, text("title", title), description,
                            sum(r[3] for r in rows), free_form_criterion_comments, hide_score_total))
    sql.cursor(session).executemany(
        "INSERT INTO canvas_rubric_criterion (rubric_id, position, description, long_description, "
        "points, criterion_use_range, ratings) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [(rubric_id, *row) for row in rows])
    return rubric_id


def rubric_brief(r: Rubric) -> dict[str, Any]:
    return {"id": r.id, "title": r.title, "points_possible": r.points_possible,
            "criteria_count": r.criteria_count}


def rubric_view(session: Session, r: Rubric) -> dict[str, Any]:
    """The rubric with its criteria in order."""
    criteria = sql.run(session, "SELECT id, description, long_description, points, "
                                "criterion_use_range, ratings FROM canvas_rubric_criterion "
                                "WHERE rubric_id = ? ORDER BY position, id", (r.id,))
    return {"id": r.id, "title": r.title, "description": r.description,
            "points_possible": r.points_possible,
            "free_form_criterion_comments": bool(r.free_form_criterion_comments),
            "hide_score_total": bool(r.hide_score_total),
            "criteria": [{"id": cid, "description": desc, "long_description": long_desc,
                          "points": points, "criterion_use_range": bool(use_range),
                          "ratings": json.loads(ratings)}
                         for cid, desc, long_desc, points, use_range, ratings in criteria]}
