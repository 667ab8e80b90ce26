"""Canvas tables of graded work: assignments, submissions and grades, quizzes with their
questions and attempts, rubrics. Tables that lose rows (deleted quizzes and questions,
replaced answers and attachments) use AUTOINCREMENT, so an id is never reused."""

from __future__ import annotations

from sqlalchemy import Column, Text, UniqueConstraint
from sqlmodel import Field, SQLModel

NO_REUSE = {"sqlite_autoincrement": True}


class CanvasAssignment(SQLModel, table=True):
    """`submission_types` is a comma-separated list of online_text_entry / online_url /
    online_upload / on_paper / none."""

    __tablename__ = "canvas_assignment"
    id: int | None = Field(default=None, primary_key=True)
    course_id: int = Field(foreign_key="canvas_course.id", index=True)
    name: str
    description: str | None = None
    due_at: str | None = Field(default=None, index=True)  # "what is due next" reads it in order
    unlock_at: str | None = None
    lock_at: str | None = None
    points_possible: float | None = None
    submission_types: str = "online_text_entry"
    published: bool = True


class CanvasSubmission(SQLModel, table=True):
    """The current attempt of one student on one assignment (workflow_state submitted /
    graded / unsubmitted)."""

    __tablename__ = "canvas_submission"
    __table_args__ = (UniqueConstraint("assignment_id", "user_id"),)
    id: int | None = Field(default=None, primary_key=True)
    assignment_id: int = Field(foreign_key="canvas_assignment.id")
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
    __table_args__ = (UniqueConstraint("submission_id", "file_id"), NO_REUSE)
    id: int | None = Field(default=None, primary_key=True)
    submission_id: int = Field(foreign_key="canvas_submission.id")
    file_id: int = Field(foreign_key="canvas_file.id")


class CanvasGrade(SQLModel, table=True):
    """One grading of a submission, with the grader's comment (the gradebook history)."""

    __tablename__ = "canvas_grade"
    id: int | None = Field(default=None, primary_key=True)
    submission_id: int = Field(foreign_key="canvas_submission.id", index=True)
    grader_id: int = Field(foreign_key="canvas_user.id")
    grade: str
    score: float
    comment: str | None = None
    graded_at: str


class CanvasQuiz(SQLModel, table=True):
    """`question_count` and `points_possible` are stored totals (recomputed when questions
    change); `credits` is set by generators only. The access code is never shown."""

    __tablename__ = "canvas_quiz"
    __table_args__ = NO_REUSE
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


class CanvasQuizQuestion(SQLModel, table=True):
    __tablename__ = "canvas_quiz_question"
    __table_args__ = NO_REUSE
    id: int | None = Field(default=None, primary_key=True)
    quiz_id: int = Field(foreign_key="canvas_quiz.id", index=True)
    position: int
    question_name: str
    question_text: str
    question_type: str
    points_possible: float


class CanvasQuizAnswer(SQLModel, table=True):
    """A possible answer of a question; `weight` 100 marks a correct one."""

    __tablename__ = "canvas_quiz_answer"
    __table_args__ = NO_REUSE
    id: int | None = Field(default=None, primary_key=True)
    question_id: int = Field(foreign_key="canvas_quiz_question.id", index=True)
    position: int
    text: str
    weight: float = 0.0
    comments: str | None = None


class CanvasQuizSubmission(SQLModel, table=True):
    """One attempt of one user at a quiz (workflow_state untaken / complete / pending_review)."""

    __tablename__ = "canvas_quiz_submission"
    __table_args__ = (UniqueConstraint("quiz_id", "user_id", "attempt"), NO_REUSE)
    id: int | None = Field(default=None, primary_key=True)
    quiz_id: int = Field(foreign_key="canvas_quiz.id")
    user_id: int = Field(foreign_key="canvas_user.id", index=True)
    attempt: int = 1
    workflow_state: str = "complete"
    started_at: str
    finished_at: str | None = None
    score: float | None = None


class CanvasRubric(SQLModel, table=True):
    __tablename__ = "canvas_rubric"
    id: int | None = Field(default=None, primary_key=True)
    course_id: int = Field(foreign_key="canvas_course.id", index=True)
    title: str
    description: str | None = None
    points_possible: float
    free_form_criterion_comments: bool = False
    hide_score_total: bool = False


class CanvasRubricCriterion(SQLModel, table=True):
    """`ratings` is a JSON list of `{description, points}`, highest points first."""

    __tablename__ = "canvas_rubric_criterion"
    id: int | None = Field(default=None, primary_key=True)
    rubric_id: int = Field(foreign_key="canvas_rubric.id", index=True)
    position: int
    description: str
    long_description: str | None = None
    points: float
    criterion_use_range: bool = False
    ratings: str = Field(sa_column=Column(Text, nullable=False))
