"""The Canvas domain layer shared by tools, world generators and checkers, one module per
resource. This package re-exports the insert functions generators use.

Insert functions accept explicit values for what tools never let an agent set (ids, dates,
stored totals such as a quiz's question_count), check them, flush (so ids are known) and never
commit: the caller's transaction decides. What generators make by the thousand (users, courses,
enrollments, assignments, submissions, quizzes, quiz submissions, topics, notifications,
calendar events) also has a bulk twin, `add_xs(session, rows)`, taking the same keyword
arguments per row and inserting them all in one executemany. Instants are
accepted as aware datetimes or ISO 8601 strings with `Z` or an offset and stored as UTC
`YYYY-MM-DDTHH:MM:SSZ`.

Everything else is plain SQL on the session's connection (`core.sql`); rows come back as named
tuples whose flags are SQLite's 0/1."""

from mock_servers.canvas.domain.accounts import add_account
from mock_servers.canvas.domain.assignments import (
    add_assignment,
    add_assignments,
    add_submission,
    add_submissions,
    attach_files,
)
from mock_servers.canvas.domain.calendar import add_calendar_event, add_calendar_events
from mock_servers.canvas.domain.courses import add_course, add_courses, add_enrollments, enroll
from mock_servers.canvas.domain.discussions import add_entry, add_topic, add_topics
from mock_servers.canvas.domain.files import add_file, add_folder, add_page
from mock_servers.canvas.domain.messages import (
    add_conversation,
    add_message,
    add_notification,
    add_notifications,
)
from mock_servers.canvas.domain.modules import add_module, add_module_item, add_progress
from mock_servers.canvas.domain.quizzes import (
    add_question,
    add_quiz,
    add_quiz_submission,
    add_quiz_submissions,
    add_quizzes,
)
from mock_servers.canvas.domain.rubrics import add_rubric
from mock_servers.canvas.domain.users import add_user, add_users, log_in

__all__ = [
    "add_account", "add_assignment", "add_assignments", "add_calendar_event",
    "add_calendar_events", "add_conversation", "add_course", "add_courses", "add_enrollments",
    "add_entry", "add_file", "add_folder", "add_message", "add_module", "add_module_item",
    "add_notification", "add_notifications", "add_page", "add_progress", "add_question",
    "add_quiz", "add_quiz_submission", "add_quiz_submissions", "add_quizzes", "add_rubric",
    "add_submission", "add_submissions", "add_topic", "add_topics", "add_user", "add_users",
    "attach_files", "enroll", "log_in",
]
