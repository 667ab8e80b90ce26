"""Canvas tables. Instants are stored as UTC strings `YYYY-MM-DDTHH:MM:SSZ` (they sort as
instants); ids are integer sequences."""

from __future__ import annotations

from sqlalchemy import UniqueConstraint
from sqlmodel import Field, SQLModel


class CanvasAccount(SQLModel, table=True):
    __tablename__ = "canvas_account"
    id: int | None = Field(default=None, primary_key=True)
    name: str
    parent_account_id: int | None = None
    root_account_id: int | None = None
    workflow_state: str = "active"


class CanvasUser(SQLModel, table=True):
    __tablename__ = "canvas_user"
    id: int | None = Field(default=None, primary_key=True)
    name: str
    short_name: str
    sortable_name: str
    login_id: str = Field(unique=True)
    email: str
    time_zone: str = "UTC"
    password_hash: str
    bio: str | None = None
    title: str | None = None
    is_admin: bool = False


class CanvasCourse(SQLModel, table=True):
    __tablename__ = "canvas_course"
    id: int | None = Field(default=None, primary_key=True)
    account_id: int = Field(foreign_key="canvas_account.id")
    name: str
    course_code: str
    workflow_state: str = "available"  # unpublished / available / completed
    start_at: str | None = None
    end_at: str | None = None
    time_zone: str = "UTC"
    is_public: bool = False
    syllabus_body: str | None = None
    term: str | None = None


class CanvasEnrollment(SQLModel, table=True):
    __tablename__ = "canvas_enrollment"
    __table_args__ = (UniqueConstraint("user_id", "course_id", "type"),)
    id: int | None = Field(default=None, primary_key=True)
    course_id: int = Field(foreign_key="canvas_course.id", index=True)
    user_id: int = Field(foreign_key="canvas_user.id", index=True)
    type: str  # StudentEnrollment / TeacherEnrollment / TaEnrollment / ObserverEnrollment / DesignerEnrollment
    enrollment_state: str = "active"  # active / invited / inactive / completed


class CanvasDiscussionTopic(SQLModel, table=True):
    """Discussion topics and announcements (`is_announcement`)."""

    __tablename__ = "canvas_discussion_topic"
    id: int | None = Field(default=None, primary_key=True)
    course_id: int = Field(foreign_key="canvas_course.id", index=True)
    title: str
    message: str
    posted_at: str
    author_id: int = Field(foreign_key="canvas_user.id")
    is_announcement: bool = False
    published: bool = True


class CanvasDiscussionEntry(SQLModel, table=True):
    __tablename__ = "canvas_discussion_entry"
    id: int | None = Field(default=None, primary_key=True)
    topic_id: int = Field(foreign_key="canvas_discussion_topic.id", index=True)
    user_id: int = Field(foreign_key="canvas_user.id")
    message: str
    created_at: str


class CanvasSession(SQLModel, table=True):
    """The logged-in user (a row, so a restarted server process keeps it)."""

    __tablename__ = "canvas_session"
    id: int = Field(default=1, primary_key=True)
    user_id: int | None = Field(default=None, foreign_key="canvas_user.id")
