"""Canvas tables of accounts, people and their private records: users, courses, enrollments,
conversations, notifications, calendar events and account reports."""

from __future__ import annotations

from sqlalchemy import DDL, Index, UniqueConstraint, event
from sqlmodel import Field, SQLModel


class CanvasAccount(SQLModel, table=True):
    __tablename__ = "canvas_account"
    id: int | None = Field(default=None, primary_key=True)
    name: str
    parent_account_id: int | None = Field(default=None, foreign_key="canvas_account.id")
    root_account_id: int | None = None
    workflow_state: str = "active"


class CanvasUser(SQLModel, table=True):
    """`account_id` is the account of the user's login (null: known through enrollments only);
    `is_admin` makes the user an administrator of every account."""

    __tablename__ = "canvas_user"
    id: int | None = Field(default=None, primary_key=True)
    name: str
    short_name: str
    sortable_name: str
    login_id: str = Field(unique=True)
    email: str | None = None
    time_zone: str = "UTC"
    password_hash: str
    bio: str | None = None
    title: str | None = None
    is_admin: bool = False
    account_id: int | None = Field(default=None, foreign_key="canvas_account.id", index=True)
    sis_user_id: str | None = Field(default=None, unique=True)
    last_login_at: str | None = None


class CanvasCourse(SQLModel, table=True):
    """`term` is the term's display name, `enrollment_term_id` its id (report filters)."""

    __tablename__ = "canvas_course"
    id: int | None = Field(default=None, primary_key=True)
    account_id: int = Field(foreign_key="canvas_account.id", index=True)
    name: str
    course_code: str
    workflow_state: str = "available"  # unpublished / available / completed
    start_at: str | None = None
    end_at: str | None = None
    time_zone: str = "UTC"
    is_public: bool = False
    syllabus_body: str | None = None
    term: str | None = None
    enrollment_term_id: int | None = None
    sis_course_id: str | None = None


class CanvasEnrollment(SQLModel, table=True):
    """Two covering indexes answer "my enrollments" and "a course's teachers/students" from the
    index alone."""

    __tablename__ = "canvas_enrollment"
    __table_args__ = (UniqueConstraint("user_id", "course_id", "type"),
                      Index("ix_canvas_enrollment_user", "user_id", "course_id", "type", "enrollment_state"),
                      Index("ix_canvas_enrollment_course", "course_id", "type", "enrollment_state", "user_id"))
    id: int | None = Field(default=None, primary_key=True)
    course_id: int = Field(foreign_key="canvas_course.id")
    user_id: int = Field(foreign_key="canvas_user.id")
    type: str  # StudentEnrollment / TeacherEnrollment / TaEnrollment / ObserverEnrollment / DesignerEnrollment
    enrollment_state: str = "active"  # active / invited / inactive / completed


class CanvasConversation(SQLModel, table=True):
    __tablename__ = "canvas_conversation"
    id: int | None = Field(default=None, primary_key=True)
    subject: str | None = None
    created_at: str


class CanvasConversationParticipant(SQLModel, table=True):
    __tablename__ = "canvas_conversation_participant"
    __table_args__ = (UniqueConstraint("user_id", "conversation_id"),)
    id: int | None = Field(default=None, primary_key=True)
    conversation_id: int = Field(foreign_key="canvas_conversation.id", index=True)
    user_id: int = Field(foreign_key="canvas_user.id")


class CanvasConversationMessage(SQLModel, table=True):
    __tablename__ = "canvas_conversation_message"
    id: int | None = Field(default=None, primary_key=True)
    conversation_id: int = Field(foreign_key="canvas_conversation.id", index=True)
    author_id: int = Field(foreign_key="canvas_user.id")
    body: str
    created_at: str


class CanvasNotification(SQLModel, table=True):
    """A notification addressed to one user."""

    __tablename__ = "canvas_notification"
    id: int | None = Field(default=None, primary_key=True)
    user_id: int = Field(foreign_key="canvas_user.id", index=True)
    subject: str
    message: str
    notification_type: str
    created_at: str
    read: bool = False


class CanvasCalendarEvent(SQLModel, table=True):
    """An event of a course (`course_id`) or of one user (`user_id`)."""

    __tablename__ = "canvas_calendar_event"
    id: int | None = Field(default=None, primary_key=True)
    course_id: int | None = Field(default=None, foreign_key="canvas_course.id", index=True)
    user_id: int | None = Field(default=None, foreign_key="canvas_user.id", index=True)
    title: str
    description: str | None = None
    start_at: str
    end_at: str | None = None
    location_name: str | None = None


class CanvasAccountReport(SQLModel, table=True):
    """A finished account report; its CSV is the file `file_id`. `parameters` is JSON."""

    __tablename__ = "canvas_account_report"
    id: int | None = Field(default=None, primary_key=True)
    account_id: int = Field(foreign_key="canvas_account.id", index=True)
    user_id: int = Field(foreign_key="canvas_user.id")
    report: str
    parameters: str = "{}"
    status: str = "complete"
    created_at: str
    file_id: int | None = Field(default=None, foreign_key="canvas_file.id")


class CanvasKept(SQLModel, table=True):
    """A view kept as JSON text (`core.kept`): for kind `course`, a course's `Course` projection
    up to the caller's enrollment (`{..., "teachers": [...], "enrollment":`)."""

    __tablename__ = "canvas_kept"
    kind: str = Field(primary_key=True)
    id: int = Field(primary_key=True)
    text: str


_TEACHES = "type = 'TeacherEnrollment'"
_DROP_COURSE = "DELETE FROM canvas_kept WHERE kind = 'course' AND id = {row}.course_id;"
_DROP_TAUGHT = (f"DELETE FROM canvas_kept WHERE kind = 'course' AND id IN (SELECT course_id FROM canvas_enrollment "
                f"WHERE user_id = OLD.id AND {_TEACHES});")
# A course's kept text is made of its row, its teacher enrollments and those teachers' names and
# e-mails: a change to any of them drops it. (trigger name, event, table, condition, body)
for _name, _event, _table, _when, _body in (
        ("course_update", "UPDATE", "canvas_course", "", _DROP_COURSE.replace("{row}.course_id", "OLD.id")),
        ("course_delete", "DELETE", "canvas_course", "", _DROP_COURSE.replace("{row}.course_id", "OLD.id")),
        ("teacher_insert", "INSERT", "canvas_enrollment", f"NEW.{_TEACHES}", _DROP_COURSE.format(row="NEW")),
        ("teacher_update", "UPDATE", "canvas_enrollment", f"OLD.{_TEACHES} OR NEW.{_TEACHES}",
         _DROP_COURSE.format(row="OLD") + " " + _DROP_COURSE.format(row="NEW")),
        ("teacher_delete", "DELETE", "canvas_enrollment", f"OLD.{_TEACHES}", _DROP_COURSE.format(row="OLD")),
        ("user_update", "UPDATE OF name, email", "canvas_user", "", _DROP_TAUGHT),
        ("user_delete", "DELETE", "canvas_user", "", _DROP_TAUGHT)):
    _condition = f" WHEN {_when}" if _when else ""
    event.listen(SQLModel.metadata.tables[_table], "after_create",
                 DDL(f"CREATE TRIGGER canvas_kept_{_name} AFTER {_event} ON {_table}{_condition} BEGIN {_body} END"))
