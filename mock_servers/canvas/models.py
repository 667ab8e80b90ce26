"""Canvas tables. Instants are stored as UTC strings `YYYY-MM-DDTHH:MM:SSZ` (they sort as
instants); ids are integer sequences."""

from __future__ import annotations

from sqlalchemy import Column, LargeBinary, UniqueConstraint
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



class CanvasAssignment(SQLModel, table=True):
    """`submission_types` is a comma-separated list of online_text_entry / online_url /
    online_upload / on_paper / none."""

    __tablename__ = "canvas_assignment"
    id: int | None = Field(default=None, primary_key=True)
    course_id: int = Field(foreign_key="canvas_course.id", index=True)
    name: str
    description: str | None = None
    due_at: str | None = None
    unlock_at: str | None = None
    lock_at: str | None = None
    points_possible: float | None = None
    submission_types: str = "online_text_entry"
    published: bool = True


class CanvasFile(SQLModel, table=True):
    """An uploaded file: in a course's files (`course_id`) or a user's own (`user_id`)."""

    __tablename__ = "canvas_file"
    id: int | None = Field(default=None, primary_key=True)
    course_id: int | None = Field(default=None, foreign_key="canvas_course.id", index=True)
    user_id: int | None = Field(default=None, foreign_key="canvas_user.id", index=True)
    folder_id: int | None = None
    display_name: str
    filename: str
    content_type: str
    size: int
    created_at: str
    data: bytes = Field(sa_column=Column(LargeBinary, nullable=False))


class CanvasSubmission(SQLModel, table=True):
    """The current attempt of one student on one assignment (workflow_state submitted /
    graded / unsubmitted)."""

    __tablename__ = "canvas_submission"
    __table_args__ = (UniqueConstraint("assignment_id", "user_id"),)
    id: int | None = Field(default=None, primary_key=True)
    assignment_id: int = Field(foreign_key="canvas_assignment.id", index=True)
    user_id: int = Field(foreign_key="canvas_user.id", index=True)
    workflow_state: str = "submitted"
    submission_type: str | None = None
    body: str | None = None
    url: str | None = None
    submitted_at: str | None = None
    attempt: int | None = None
    grade: str | None = None
    score: float | None = None
    graded_at: str | None = None


class CanvasSubmissionFile(SQLModel, table=True):
    """Files attached to a submission's current attempt."""

    __tablename__ = "canvas_submission_file"
    __table_args__ = (UniqueConstraint("submission_id", "file_id"),)
    id: int | None = Field(default=None, primary_key=True)
    submission_id: int = Field(foreign_key="canvas_submission.id", index=True)
    file_id: int = Field(foreign_key="canvas_file.id")


class CanvasQuiz(SQLModel, table=True):
    """`question_count` and `points_possible` are stored totals; `credits` is set by generators
    only. The access code is never shown."""

    __tablename__ = "canvas_quiz"
    id: int | None = Field(default=None, primary_key=True)
    course_id: int = Field(foreign_key="canvas_course.id", index=True)
    title: str
    description: str | None = None
    quiz_type: str = "assignment"  # practice_quiz / assignment / graded_survey / survey
    time_limit: int | None = None  # minutes
    allowed_attempts: int = 1  # -1 = unlimited
    scoring_policy: str = "keep_highest"  # keep_highest / keep_latest / keep_average
    shuffle_answers: bool = False
    points_possible: float | None = None
    question_count: int = 0
    due_at: str | None = None
    published: bool = True
    access_code: str | None = None
    credits: int | None = None


class CanvasQuizSubmission(SQLModel, table=True):
    """One attempt of one user at a quiz (workflow_state untaken / complete / pending_review)."""

    __tablename__ = "canvas_quiz_submission"
    __table_args__ = (UniqueConstraint("quiz_id", "user_id", "attempt"),)
    id: int | None = Field(default=None, primary_key=True)
    quiz_id: int = Field(foreign_key="canvas_quiz.id", index=True)
    user_id: int = Field(foreign_key="canvas_user.id", index=True)
    attempt: int = 1
    workflow_state: str = "complete"
    started_at: str
    finished_at: str | None = None
    score: float | None = None
