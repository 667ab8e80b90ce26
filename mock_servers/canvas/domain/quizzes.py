"""Canvas quizzes: inserts with explicit values, questions with their answers (ids from
sequences, quiz totals kept in step), attempts, and the projections tools return."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from sqlmodel import Session

from mock_servers.canvas.domain.base import choice, insert, insert_many, points, table, text, update_row
from mock_servers.canvas.models import CanvasQuiz, CanvasQuizSubmission
from mock_servers.core import sql
from mock_servers.core.errors import Code, ToolFailure, invalid, not_found
from mock_servers.core.times import optional_instant as instant

QUIZ_TYPES = ("practice_quiz", "assignment", "graded_survey", "survey")
SCORING_POLICIES = ("keep_highest", "keep_latest", "keep_average")
QUIZ_SUBMISSION_STATES = ("untaken", "complete", "pending_review")
QUESTION_TYPES = ("multiple_choice_question", "true_false_question", "short_answer_question",
                  "essay_question", "multiple_answers_question", "numerical_question")
QUIZ_FIELDS = ("title", "description", "quiz_type", "time_limit", "due_at", "published",
               "shuffle_answers", "allowed_attempts", "scoring_policy", "access_code")  # updatable
QUESTION_FIELDS = ("question_name", "question_text", "points_possible")  # updatable
CORRECT = 100.0  # answer weight of a correct answer
MAX_TIME_LIMIT = 525_600  # minutes: a year
MAX_ATTEMPTS = 1000


class Quiz(NamedTuple):
    id: int
    course_id: int
    title: str
    description: str | None
    quiz_type: str
    time_limit: int | None
    allowed_attempts: int
    scoring_policy: str
    shuffle_answers: int
    points_possible: float | None
    question_count: int
    due_at: str | None
    published: int
    access_code: str | None
    credits: int | None


class Question(NamedTuple):
    id: int
    quiz_id: int
    position: int
    question_name: str
    question_text: str
    question_type: str
    points_possible: float


QUIZZES = table(Quiz, "canvas_quiz")
QUESTIONS = table(Question, "canvas_quiz_question")


# ---------------------------------------------------------------- inserts

def _check_settings(values: Mapping[str, Any]) -> None:
    limit, attempts = values.get("time_limit"), values.get("allowed_attempts")
    if limit is not None and not 1 <= limit <= MAX_TIME_LIMIT:
        raise invalid(f"time_limit {limit} must be 1..{MAX_TIME_LIMIT} minutes (omit it for no limit)")
    if attempts is not None and not (attempts == -1 or 1 <= attempts <= MAX_ATTEMPTS):
        raise invalid(f"allowed_attempts {attempts} must be -1 (unlimited) or 1..{MAX_ATTEMPTS}")
    for field in ("points_possible", "credits"):
        if values.get(field) is not None:
            points(field, values[field])
    if "quiz_type" in values:
        choice("quiz_type", values["quiz_type"], QUIZ_TYPES)
    if "scoring_policy" in values:
        choice("scoring_policy", values["scoring_policy"], SCORING_POLICIES)
    if "title" in values:
        text("title", values["title"])


def quiz_row(*, course_id: int, title: str, description: str | None = None,
             quiz_type: str = "assignment", time_limit: int | None = None,
             allowed_attempts: int = 1, scoring_policy: str = "keep_highest",
             shuffle_answers: bool = False, points_possible: float | None = None,
             question_count: int = 0, due_at: Any = None, published: bool = True,
             access_code: str | None = None, credits: int | None = None,
             id: int | None = None) -> dict[str, Any]:
    """The checked values of one quiz; `question_count` and `points_possible` are the stored
    totals (set them for a quiz whose questions are not generated)."""
    values = {"id": id, "course_id": course_id, "title": title, "description": description,
              "quiz_type": quiz_type, "time_limit": time_limit,
              "allowed_attempts": allowed_attempts, "scoring_policy": scoring_policy,
              "shuffle_answers": shuffle_answers, "points_possible": points_possible,
              "question_count": question_count, "due_at": instant(due_at),
              "published": published, "access_code": access_code, "credits": credits}
    _check_settings(values)
    return values


def add_quiz(session: Session, **values: Any) -> CanvasQuiz:
    """One quiz (see `quiz_row`)."""
    return insert(session, CanvasQuiz(**quiz_row(**values)))


def add_quizzes(session: Session, rows: Iterable[Mapping[str, Any]]) -> int:
    """Many quizzes in one statement, each given as `add_quiz`'s keyword arguments."""
    return insert_many(session, CanvasQuiz, quiz_row, rows)


def quiz_submission_row(*, quiz_id: int, user_id: int, started_at: Any, attempt: int = 1,
                        finished_at: Any = None, score: float | None = None,
                        workflow_state: str = "complete", id: int | None = None) -> dict[str, Any]:
    return {"id": id, "quiz_id": quiz_id, "user_id": user_id, "attempt": attempt,
            "workflow_state": choice("workflow_state", workflow_state, QUIZ_SUBMISSION_STATES),
            "started_at": instant(started_at), "finished_at": instant(finished_at), "score": score}


def add_quiz_submission(session: Session, **values: Any) -> CanvasQuizSubmission:
    """One attempt of a user at a quiz (see `quiz_submission_row`)."""
    return insert(session, CanvasQuizSubmission(**quiz_submission_row(**values)))


def add_quiz_submissions(session: Session, rows: Iterable[Mapping[str, Any]]) -> int:
    """Many attempts in one statement, each given as `add_quiz_submission`'s keyword arguments."""
    return insert_many(session, CanvasQuizSubmission, quiz_submission_row, rows)


# ---------------------------------------------------------------- questions

def _answers(question_type: str, answers: Sequence[Mapping[str, Any]]) -> list[tuple[str, float, Any]]:
    """(text, weight, comments) of answers that suit the question type."""
    out = []
    for a in answers:
        weight = float(a.get("weight") or 0.0)
        if not 0.0 <= weight <= CORRECT:
            raise invalid(f"answer weight {weight} must be between 0 and {CORRECT:g}")
        out.append((text("answer text", a["text"]), weight, a.get("comments")))
    correct = sum(1 for _, w, _ in out if w > 0)
    rules = {
        "essay_question": (not out, "take no answers"),
        "true_false_question": (len(out) == 2 and correct == 1,
                                "need exactly 2 answers, one of them correct (weight 100)"),
        "multiple_choice_question": (len(out) >= 2 and correct == 1,
                                     "need at least 2 answers, exactly one correct (weight 100)"),
        "multiple_answers_question": (len(out) >= 2 and correct >= 1,
                                      "need at least 2 answers, at least one correct"),
        "short_answer_question": (bool(out) and correct == len(out),
                                  "need at least one accepted answer, each with weight 100"),
        "numerical_question": (bool(out) and correct == len(out),
                               "need at least one accepted numeric answer, each with weight 100"),
    }
    ok, rule = rules[question_type]
    if not ok:
        raise invalid(f"{question_type.replace('_', ' ')}s {rule}")
    if question_type == "numerical_question":
        for answer_text, _, _ in out:
            try:
                float(answer_text)
            except ValueError:
                raise invalid(f"numerical answer '{answer_text}' is not a number") from None
    return out


def _store_answers(session: Session, question_id: int, answers: list[tuple[str, float, Any]]) -> None:
    sql.run(session, "DELETE FROM canvas_quiz_answer WHERE question_id = ?", (question_id,))
    sql.cursor(session).executemany(
        "INSERT INTO canvas_quiz_answer (question_id, position, text, weight, comments) "
        "VALUES (?, ?, ?, ?, ?)",
        [(question_id, i, t, w, c) for i, (t, w, c) in enumerate(answers, start=1)])


def recompute_totals(session: Session, quiz_id: int) -> None:
    """question_count and points_possible of a quiz from its questions."""
    sql.run(session, "UPDATE canvas_quiz SET question_count = (SELECT count(*) FROM "
                     "canvas_quiz_question q WHERE q.quiz_id = canvas_quiz.id), points_possible = "
                     "(SELECT coalesce(sum(q.points_possible), 0) FROM canvas_quiz_question q "
                     "WHERE q.quiz_id = canvas_quiz.id) WHERE id = ?", (quiz_id,))


_INSERT_QUESTION = (f"INSERT INTO canvas_quiz_question ({', '.join(Question._fields)}) "
                    f"VALUES ({sql.marks(len(Question._fields))}) RETURNING id")


def add_question(session: Session, *, quiz_id: int, question_text: str,
                 question_name: str | None = None,
                 question_type: str = "multiple_choice_question", points_possible: float = 1.0,
                 answers: Sequence[Mapping[str, Any]] = (), id: int | None = None) -> Question:
    """A question at the end of the quiz, answers `{text, weight, comments}` (weight 100 =
    correct); the quiz totals follow."""
    choice("question_type", question_type, QUESTION_TYPES)
    checked = _answers(question_type, answers)
    points("points_possible", points_possible)
    position = sql.scalar(session, "SELECT coalesce(max(position), 0) + 1 FROM "
                                   "canvas_quiz_question WHERE quiz_id = ?", (quiz_id,))
    values = (quiz_id, position, question_name or "Question", text("question_text", question_text),
              question_type, points_possible)
    question = Question(sql.scalar(session, _INSERT_QUESTION, (id, *values)), *values)
    _store_answers(session, question.id, checked)
    recompute_totals(session, quiz_id)
    return question


def question_in(session: Session, quiz_id: int, question_id: int) -> Question:
    """A question of the quiz, else NOT_FOUND."""
    row = sql.first(session, Question, QUESTIONS.select("x.id = ? AND x.quiz_id = ?"),
                    (question_id, quiz_id))
    if row is None:
        raise not_found(f"question {question_id} not found in quiz {quiz_id}")
    return row


def update_question(session: Session, q: Question, changes: dict[str, Any],
                    answers: Sequence[Mapping[str, Any]] | None) -> Question:
    """Change the question's name, text or points, and replace its answers when given."""
    if "question_text" in changes:
        text("question_text", changes["question_text"])
    if changes.get("points_possible") is not None:
        points("points_possible", changes["points_possible"])
    if answers is not None:
        _store_answers(session, q.id, _answers(q.question_type, answers))
    if changes:
        update_row(session, "canvas_quiz_question", q.id, changes, QUESTION_FIELDS)
    recompute_totals(session, q.quiz_id)
    return q._replace(**changes)


def delete_question(session: Session, q: Question) -> None:
    """Remove a question and its answers; later questions move up one place."""
    sql.run(session, "DELETE FROM canvas_quiz_answer WHERE question_id = ?", (q.id,))
    sql.run(session, "DELETE FROM canvas_quiz_question WHERE id = ?", (q.id,))
    sql.run(session, "UPDATE canvas_quiz_question SET position = position - 1 "
                     "WHERE quiz_id = ? AND position > ?", (q.quiz_id, q.position))
    recompute_totals(session, q.quiz_id)


def question_views(session: Session, questions: list[Question]) -> list[dict[str, Any]]:
    """`Question` projections with their answers (one query per batch)."""
    answers: dict[int, list[dict[str, Any]]] = {q.id: [] for q in questions}
    rows = sql.run(session, "SELECT question_id, position, id, text, weight FROM canvas_quiz_answer "
                            f"WHERE question_id IN ({sql.marks(len(questions))})",
                   [q.id for q in questions]).fetchall()
    for question_id, _, aid, answer_text, weight in sorted(rows):
        answers[question_id].append({"id": aid, "text": answer_text, "weight": weight})
    return [{"id": q.id, "quiz_id": q.quiz_id, "position": q.position,
             "question_name": q.question_name, "question_text": q.question_text,
             "question_type": q.question_type, "points_possible": q.points_possible,
             "answers": answers[q.id]} for q in questions]


# ---------------------------------------------------------------- quizzes

def update_quiz(session: Session, quiz: Quiz, changes: dict[str, Any]) -> Quiz:
    """Set some of `QUIZ_FIELDS`; an empty access_code removes the code."""
    values = dict(changes)
    if "due_at" in values:
        values["due_at"] = instant(values["due_at"])
    if values.get("access_code") == "":
        values["access_code"] = None
    _check_settings(values)
    update_row(session, "canvas_quiz", quiz.id, values, QUIZ_FIELDS)
    return quiz._replace(**values)


def delete_quiz(session: Session, quiz_id: int) -> None:
    """Remove a quiz with its questions, attempts and the module items that show it."""
    for statement in (
            "DELETE FROM canvas_quiz_answer WHERE question_id IN "
            "(SELECT id FROM canvas_quiz_question WHERE quiz_id = ?)",
            "DELETE FROM canvas_quiz_question WHERE quiz_id = ?",
            "DELETE FROM canvas_quiz_submission WHERE quiz_id = ?",
            "DELETE FROM canvas_module_progress WHERE item_id IN (SELECT id FROM "
            "canvas_module_item WHERE type = 'Quiz' AND content_id = ?)",
            "DELETE FROM canvas_module_item WHERE type = 'Quiz' AND content_id = ?",
            "DELETE FROM canvas_quiz WHERE id = ?"):
        sql.run(session, statement, (quiz_id,))


def start_attempt(session: Session, quiz: Quiz, user_id: int, now_z: str) -> dict[str, Any]:
    """A new untaken attempt: the quiz must be published, no attempt in progress and an
    attempt left."""
    if not quiz.published:
        raise ToolFailure(Code.FAILED_PRECONDITION, f"quiz {quiz.id} is not published")
    last, taken, open_ = sql.run(
        session, "SELECT coalesce(max(attempt), 0), count(*), coalesce(sum(workflow_state = "
                 "'untaken'), 0) FROM canvas_quiz_submission WHERE quiz_id = ? AND user_id = ?",
        (quiz.id, user_id)).fetchone()
    if open_:
        raise ToolFailure(Code.FAILED_PRECONDITION, f"attempt {last} of quiz {quiz.id} is in progress")
    if quiz.allowed_attempts != -1 and taken >= quiz.allowed_attempts:
        raise ToolFailure(Code.FAILED_PRECONDITION,
                          f"all {quiz.allowed_attempts} allowed attempts of quiz {quiz.id} are used")
    row = add_quiz_submission(session, quiz_id=quiz.id, user_id=user_id, attempt=last + 1,
                              started_at=now_z, workflow_state="untaken")
    return {"id": row.id, "quiz_id": quiz.id, "user_id": user_id, "attempt": row.attempt,
            "started_at": row.started_at, "workflow_state": row.workflow_state}


_LATEST_ATTEMPT = ("SELECT id, attempt, workflow_state, started_at, finished_at, score "
                   "FROM canvas_quiz_submission WHERE quiz_id = ? AND user_id = ? "
                   "ORDER BY attempt DESC, id DESC LIMIT 1")


def latest_attempt_view(session: Session, quiz_id: int, user_id: int) -> dict[str, Any]:
    """The user's latest attempt at a quiz; none yet: an `untaken` placeholder with id null."""
    row = sql.run(session, _LATEST_ATTEMPT, (quiz_id, user_id)).fetchone()
    sub_id, attempt, state, started_at, finished_at, score = row or (None, None, "untaken", None, None, None)
    return {"id": sub_id, "quiz_id": quiz_id, "user_id": user_id, "attempt": attempt,
            "workflow_state": state, "started_at": started_at, "finished_at": finished_at,
            "score": score}


def quiz_view(q: Quiz) -> dict[str, Any]:
    return {"id": q.id, "course_id": q.course_id, "title": q.title, "description": q.description,
            "quiz_type": q.quiz_type, "time_limit": q.time_limit,
            "allowed_attempts": q.allowed_attempts, "scoring_policy": q.scoring_policy,
            "shuffle_answers": bool(q.shuffle_answers), "points_possible": q.points_possible,
            "question_count": q.question_count, "due_at": q.due_at, "published": bool(q.published),
            "has_access_code": bool(q.access_code), "credits": q.credits}
