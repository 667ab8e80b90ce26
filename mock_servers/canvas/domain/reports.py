"""Canvas account reports: a catalogue of report types, each really run over the account and
its sub-accounts into a CSV that is stored as a file of the administrator who asked."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from sqlmodel import Session

from mock_servers.canvas.domain.accounts import account_users
from mock_servers.canvas.domain.base import OPEN
from mock_servers.canvas.domain.files import add_file, file_view, get_file
from mock_servers.canvas.domain.grades import course_scores
from mock_servers.core import sql
from mock_servers.core.errors import invalid

TERM = "enrollment_term_id"
DELETED = "include_deleted"
PARAMETERS = {TERM: "only courses of this term",
              DELETED: "also inactive, invited and concluded enrollments"}

Rows = list[list[Any]]


@dataclass(frozen=True)
class ReportType:
    title: str
    parameters: tuple[str, ...]
    run: Callable[[Session, list[int], dict[str, Any]], Rows]


def _courses(session: Session, tree: list[int], params: dict[str, Any], where: str = "TRUE") -> list[tuple]:
    """(id, sis id, code, name, account id, term id) of the tree's courses, by id."""
    term = params.get(TERM)
    return sql.run(session, "SELECT id, sis_course_id, course_code, name, account_id, "
                            "enrollment_term_id FROM canvas_course WHERE account_id IN "
                            f"({sql.marks(len(tree))}) AND (? IS NULL OR enrollment_term_id = ?) "
                            f"AND {where} ORDER BY id", (*tree, term, term)).fetchall()


def _grade_export(session: Session, tree: list[int], params: dict[str, Any]) -> Rows:
    states = "" if params.get(DELETED) else "AND e.enrollment_state = 'active'"
    rows: Rows = [["student name", "student id", "student sis", "course", "course id",
                   "course sis", "term id", "current score", "final score", "enrollment state"]]
    for cid, csis, _, cname, _, term in _courses(session, tree, params):
        students = sql.run(session, "SELECT u.id, u.name, u.sis_user_id, e.enrollment_state FROM "
                                    "canvas_enrollment e JOIN canvas_user u ON u.id = e.user_id "
                                    f"WHERE e.course_id = ? AND e.type = 'StudentEnrollment' {states} "
                                    "ORDER BY u.sortable_name, u.id", (cid,)).fetchall()
        scores = course_scores(session, [cid], [s[0] for s in students])
        for uid, name, sis, state in students:
            rows.append([name, uid, sis, cname, cid, csis, term, scores[cid, uid]["current_score"],
                         scores[cid, uid]["final_score"], state])
    return rows


def _last_user_access(session: Session, tree: list[int], params: dict[str, Any]) -> Rows:
    listing = account_users(tree, sort="username", order="asc", search_term=None)
    where, args = listing.where, listing.params
    if params.get(TERM) is not None:
        where += (" AND EXISTS (SELECT 1 FROM canvas_enrollment t JOIN canvas_course tc ON "
                  f"tc.id = t.course_id WHERE t.user_id = x.id AND t.enrollment_state IN ({OPEN}) "
                  "AND tc.enrollment_term_id = ?)")
        args = (*args, params[TERM])
    users = sql.run(session, "SELECT x.id, x.sis_user_id, x.name, x.last_login_at FROM canvas_user x "
                             f"WHERE {where} ORDER BY {listing.order}", args).fetchall()
    return [["user id", "user sis id", "user name", "last access at"], *map(list, users)]


def _unpublished_courses(session: Session, tree: list[int], params: dict[str, Any]) -> Rows:
    rows: Rows = [["course id", "course sis id", "short name", "long name", "account id", "term id"]]
    rows += [list(c) for c in _courses(session, tree, params, "workflow_state = 'unpublished'")]
    return rows


REPORTS = {
    "grade_export_csv": ReportType("Grade Export", (TERM, DELETED), _grade_export),
    "last_user_access_csv": ReportType("Last User Access", (TERM,), _last_user_access),
    "unpublished_courses_csv": ReportType("Unpublished Courses", (TERM,), _unpublished_courses),
}


def catalogue() -> list[dict[str, Any]]:
    return [{"report": name, "title": kind.title,
             "parameters": {p: {"required": False, "description": PARAMETERS[p]} for p in kind.parameters}}
            for name, kind in REPORTS.items()]


def _csv(rows: Rows) -> bytes:
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue().encode()


def create_report(session: Session, *, account_id: int, tree: list[int], user_id: int,
                  report: str, parameters: dict[str, Any], now_z: str) -> dict[str, Any]:
    """Run a report of the catalogue now, store its CSV as a file of `user_id`, and record it."""
    kind = REPORTS.get(report)
    if kind is None:
        raise invalid(f"report '{report}' not in the catalogue; use {', '.join(REPORTS)}")
    unused = [p for p in parameters if p not in kind.parameters]
    if unused:
        raise invalid(f"report {report} takes no parameter {', '.join(unused)}; "
                      f"it takes {', '.join(kind.parameters)}")
    data = _csv(kind.run(session, tree, parameters))
    report_id = sql.scalar(session, "INSERT INTO canvas_account_report (account_id, user_id, report, "
                                    "parameters, status, created_at) VALUES (?, ?, ?, ?, 'complete', ?) "
                                    "RETURNING id", (account_id, user_id, report,
                                                     json.dumps(parameters, sort_keys=True), now_z))
    stored = add_file(session, display_name=f"{report}_{report_id}.csv", data=data,
                      created_at=now_z, content_type="text/csv", user_id=user_id)
    sql.run(session, "UPDATE canvas_account_report SET file_id = ? WHERE id = ?", (stored.id, report_id))
    return {"id": report_id, "report": report, "status": "complete", "created_at": now_z,
            "file": file_view(get_file(session, stored.id))}  # type: ignore[arg-type]
