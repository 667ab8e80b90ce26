"""Canvas tools: quizzes, their questions and students' attempts."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from mock_servers.canvas.domain.base import BY_DUE, Listing, fetch_one, paged
from mock_servers.canvas.domain.courses import CourseAccess, course_items, in_course, require_active
from mock_servers.canvas.domain.quizzes import (
    MAX_ATTEMPTS,
    MAX_TIME_LIMIT,
    QUESTIONS,
    QUIZZES,
    Quiz,
    add_question,
    add_quiz,
    delete_question,
    delete_quiz,
    latest_attempt_view,
    question_in,
    question_views,
    quiz_view,
    start_attempt,
    update_question,
    update_quiz,
)
from mock_servers.canvas.tools.common import (
    INSTANT,
    PAGE_SIZE,
    CourseId,
    Page,
    PerPage,
    PointsValue,
    QuestionId,
    QuizId,
    StudentId,
    access,
    given,
    now_z,
    paged_list,
    staff_write,
    student_of,
    toolbox,
)
from mock_servers.core.errors import denied
from mock_servers.core.toolkit import Call
from mock_servers.core.types import Int, Num

QuizType = Literal["practice_quiz", "assignment", "graded_survey", "survey"]
QuestionType = Literal["multiple_choice_question", "true_false_question", "short_answer_question",
                       "essay_question", "multiple_answers_question", "numerical_question"]
TITLE, DESCRIPTION, TIME_LIMIT = "Quiz title", "Description (HTML)", "Time limit in minutes"


class Answer(BaseModel):
    """One possible answer of a question."""

    model_config = ConfigDict(extra="forbid")
    text: Annotated[str, Field(description="Answer text")]
    weight: Annotated[Num | None, Field(ge=0, le=100, description="100 = correct, 0 = wrong (default 0)")] = None
    comments: Annotated[str | None, Field(description="Feedback for students who pick it")] = None


Answers = Annotated[list[Answer] | None, Field(max_length=50, description=(
    "Answers: multiple choice 2+ with exactly one of weight 100, true/false exactly 2, multiple "
    "answers 2+, short answer and numerical the accepted answers (weight 100), essay none"))]
QuestionPoints = Annotated[PointsValue | None, Field(description="Points for the question (default 1)")]


def _quiz(call: Call, found: CourseAccess, quiz_id: int) -> Quiz:
    return in_course(call.session, QUIZZES, quiz_id, found, "quiz")


def _answers(answers: list[Answer] | None) -> list[dict[str, Any]] | None:
    return None if answers is None else [a.model_dump() for a in answers]


@toolbox.tool(rw="read", core=True)
@paged_list
def canvas_list_quizzes(call: Call, course_id: CourseId, page: Page = 1,
                        per_page: PerPage = PAGE_SIZE) -> dict[str, Any]:
    """Quizzes of a course (questions not included) ordered by due_at (undated last), then id.
    Students see published ones only."""
    quizzes = course_items(QUIZZES, access(call, course_id), BY_DUE)
    return paged(call.session, quizzes, page, per_page, lambda rows: [quiz_view(q) for q in rows])


@toolbox.tool(rw="read", core=True)
def canvas_get_quiz(call: Call, course_id: CourseId, quiz_id: QuizId) -> dict[str, Any]:
    """One quiz of a course (NOT_FOUND if it is not in that course); time_limit in minutes,
    allowed_attempts -1 = unlimited."""
    return quiz_view(_quiz(call, access(call, course_id), quiz_id))


@toolbox.tool(rw="write")
def canvas_create_quiz(
    call: Call,
    course_id: CourseId,
    title: Annotated[str, Field(description=TITLE)],
    description: Annotated[str | None, Field(description=DESCRIPTION)] = None,
    quiz_type: Annotated[QuizType, Field(description="Kind of quiz")] = "assignment",
    time_limit: Annotated[Int | None, Field(ge=1, le=MAX_TIME_LIMIT, description=TIME_LIMIT)] = None,
    due_at: Annotated[str | None, Field(description=f"Due date: {INSTANT}")] = None,
    published: Annotated[bool, Field(description="Visible to students")] = False,
) -> dict[str, Any]:
    """Create a quiz in a course you teach (teachers, TAs, admins), without questions; it
    starts unpublished unless published is true."""
    staff_write(call, course_id, "create quizzes")
    row = add_quiz(call.session, course_id=course_id, title=title, description=description,
                   quiz_type=quiz_type, time_limit=time_limit, due_at=due_at, published=published,
                   points_possible=0.0)
    return quiz_view(fetch_one(call.session, QUIZZES, "x.id = ?", (row.id,)))


@toolbox.tool(rw="write", idempotent=True, destructive=True)
def canvas_update_quiz(
    call: Call,
    course_id: CourseId,
    quiz_id: QuizId,
    title: Annotated[str | None, Field(description=TITLE)] = None,
    description: Annotated[str | None, Field(description=DESCRIPTION)] = None,
    quiz_type: Annotated[QuizType | None, Field(description="Kind of quiz")] = None,
    time_limit: Annotated[Int | None, Field(ge=1, le=MAX_TIME_LIMIT, description=TIME_LIMIT)] = None,
    due_at: Annotated[str | None, Field(description=f"Due date: {INSTANT}")] = None,
    published: Annotated[bool | None, Field(description="Visible to students")] = None,
    shuffle_answers: Annotated[bool | None, Field(description="Shuffle answer order")] = None,
    allowed_attempts: Annotated[Int | None, Field(
        ge=-1, le=MAX_ATTEMPTS, description="-1 = unlimited, else >= 1")] = None,
    scoring_policy: Annotated[Literal["keep_highest", "keep_latest", "keep_average"] | None,
                              Field(description="Which attempt counts")] = None,
    access_code: Annotated[str | None, Field(description="Code students must enter; \"\" removes it")] = None,
) -> dict[str, Any]:
    """Change a quiz of a course you teach; only the fields given change (at least one). The
    access code is stored but never shown (has_access_code tells whether one is set)."""
    found = staff_write(call, course_id, "update quizzes")
    quiz = _quiz(call, found, quiz_id)
    changes = given(title=title, description=description, quiz_type=quiz_type,
                    time_limit=time_limit, due_at=due_at, published=published,
                    shuffle_answers=shuffle_answers, allowed_attempts=allowed_attempts,
                    scoring_policy=scoring_policy, access_code=access_code)
    return quiz_view(update_quiz(call.session, quiz, changes))


@toolbox.tool(rw="write", idempotent=True)
def canvas_publish_quiz(call: Call, course_id: CourseId, quiz_id: QuizId) -> dict[str, Any]:
    """Publish a quiz of a course you teach, so students see it (publishing twice is fine)."""
    found = staff_write(call, course_id, "publish quizzes")
    return quiz_view(update_quiz(call.session, _quiz(call, found, quiz_id), {"published": True}))


@toolbox.tool(rw="write", destructive=True, idempotent=False)
def canvas_delete_quiz(call: Call, course_id: CourseId, quiz_id: QuizId) -> dict[str, Any]:
    """Delete a quiz of a course you teach, with its questions, attempts and module items."""
    found = staff_write(call, course_id, "delete quizzes")
    delete_quiz(call.session, _quiz(call, found, quiz_id).id)
    return {"deleted": True, "quiz_id": quiz_id}


@toolbox.tool(rw="read", core=True)
def canvas_get_quiz_submission(
    call: Call,
    course_id: CourseId,
    quiz_id: QuizId,
    user_id: StudentId = None,
) -> dict[str, Any]:
    """A student's latest attempt at a quiz: workflow_state complete or pending_review once
    turned in, untaken while in progress. Never started: workflow_state "untaken" with id,
    attempt and times null. Only teachers, TAs and admins may read other students'."""
    found = access(call, course_id)
    quiz = _quiz(call, found, quiz_id)
    return latest_attempt_view(call.session, quiz.id, student_of(call, found, user_id, "quiz submissions"))


@toolbox.tool(rw="write")
def canvas_start_quiz_attempt(call: Call, course_id: CourseId, quiz_id: QuizId) -> dict[str, Any]:
    """Start your next attempt at a published quiz as a student of the course. An attempt in
    progress, or all allowed attempts used, is FAILED_PRECONDITION."""
    found = access(call, course_id)
    if not found.student:
        raise denied(f"only students of course {course_id} take quizzes")
    require_active(found, now_z(call))
    return start_attempt(call.session, _quiz(call, found, quiz_id), found.user.id, now_z(call))


@toolbox.tool(rw="write")
def canvas_add_quiz_question(
    call: Call,
    course_id: CourseId,
    quiz_id: QuizId,
    question_text: Annotated[str, Field(description="The question (HTML)")],
    question_name: Annotated[str | None, Field(description="Short name (default 'Question')")] = None,
    question_type: Annotated[QuestionType, Field(description="Kind of question")] = "multiple_choice_question",
    points_possible: QuestionPoints = None,
    answers: Answers = None,
) -> dict[str, Any]:
    """Add a question at the end of a quiz of a course you teach; the quiz's question_count
    and points_possible follow. Returns the question with its answers' ids."""
    found = staff_write(call, course_id, "edit quizzes")
    quiz = _quiz(call, found, quiz_id)
    question = add_question(call.session, quiz_id=quiz.id, question_text=question_text,
                            question_name=question_name, question_type=question_type,
                            points_possible=1.0 if points_possible is None else points_possible,
                            answers=_answers(answers) or [])
    return question_views(call.session, [question])[0]


@toolbox.tool(rw="read")
@paged_list
def canvas_get_quiz_questions(call: Call, course_id: CourseId, quiz_id: QuizId, page: Page = 1,
                              per_page: PerPage = PAGE_SIZE) -> dict[str, Any]:
    """The questions of a quiz with their answers and weights, by position (teachers, TAs and
    admins only: the weights reveal the correct answers)."""
    found = access(call, course_id)
    if not found.staff:
        raise denied(f"only teachers, TAs and admins see the questions of quizzes in course {course_id}")
    quiz = _quiz(call, found, quiz_id)
    listing = Listing(QUESTIONS, "x.quiz_id = ?", "x.position, x.id", (quiz.id,))
    return paged(call.session, listing, page, per_page,
                 lambda rows: question_views(call.session, rows))


@toolbox.tool(rw="write", idempotent=True, destructive=True)
def canvas_update_quiz_question(
    call: Call,
    course_id: CourseId,
    quiz_id: QuizId,
    question_id: QuestionId,
    question_name: Annotated[str | None, Field(description="Short name")] = None,
    question_text: Annotated[str | None, Field(description="The question (HTML)")] = None,
    points_possible: QuestionPoints = None,
    answers: Answers = None,
) -> dict[str, Any]:
    """Change a question of a quiz you teach (at least one field); answers, when given,
    replace all its answers. The quiz totals follow."""
    found = staff_write(call, course_id, "edit quizzes")
    question = question_in(call.session, _quiz(call, found, quiz_id).id, question_id)
    changes = given(question_name=question_name, question_text=question_text,
                    points_possible=points_possible, answers=answers)
    changes.pop("answers", None)
    updated = update_question(call.session, question, changes, _answers(answers))
    return question_views(call.session, [updated])[0]


@toolbox.tool(rw="write", destructive=True, idempotent=False)
def canvas_delete_quiz_question(call: Call, course_id: CourseId, quiz_id: QuizId,
                                question_id: QuestionId) -> dict[str, Any]:
    """Delete a question of a quiz you teach (NOT_FOUND when the quiz has no such question);
    later questions move up and the quiz totals follow."""
    found = staff_write(call, course_id, "edit quizzes")
    delete_question(call.session, question_in(call.session, _quiz(call, found, quiz_id).id, question_id))
    return {"deleted": True, "question_id": question_id}
