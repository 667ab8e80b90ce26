"""Canvas conversations (readable by their participants only) and notifications (each
addressed to one user)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from sqlmodel import Session

from mock_servers.canvas.domain.base import Listing, Table, insert, insert_many, text
from mock_servers.canvas.domain.courses import course_access, course_members, require_staff
from mock_servers.canvas.domain.users import User, get_user, shares_course
from mock_servers.canvas.models import CanvasConversationMessage, CanvasNotification
from mock_servers.core import sql
from mock_servers.core.errors import denied, invalid, not_found
from mock_servers.core.times import instant

MESSAGES_SHOWN = 100  # messages embedded in canvas_get_conversation
_USER_ID = re.compile(r"[0-9]{1,18}")
_COURSE = re.compile(r"course_([0-9]{1,18})")


# ---------------------------------------------------------------- notifications

class Notification(NamedTuple):
    id: int
    subject: str
    message: str
    notification_type: str
    created_at: str
    read: int


NOTIFICATIONS = Table(Notification, "x.id, x.subject, x.message, x.notification_type, "
                                    "x.created_at, x.read", "canvas_notification x")


def notification_row(*, user_id: int, subject: str, message: str, notification_type: str,
                     created_at: Any, read: bool = False, id: int | None = None) -> dict[str, Any]:
    return {"id": id, "user_id": user_id, "subject": subject, "message": message,
            "notification_type": notification_type, "created_at": instant(created_at),
            "read": read}


def add_notification(session: Session, **values: Any) -> CanvasNotification:
    """One notification for one user (see `notification_row`)."""
    return insert(session, CanvasNotification(**notification_row(**values)))


def add_notifications(session: Session, rows: Iterable[Mapping[str, Any]]) -> int:
    return insert_many(session, CanvasNotification, notification_row, rows)


def notifications_of(user_id: int) -> Listing:
    """The user's notifications, newest first."""
    return Listing(NOTIFICATIONS, "x.user_id = ?", "x.created_at DESC, x.id DESC", (user_id,))


def notification_view(n: Notification) -> dict[str, Any]:
    return {"id": n.id, "subject": n.subject, "message": n.message,
            "notification_type": n.notification_type, "created_at": n.created_at,
            "read": bool(n.read)}


# ---------------------------------------------------------------- conversations

class Conversation(NamedTuple):
    id: int
    subject: str | None
    last_message: str | None
    last_message_at: str | None
    message_count: int


_LAST = ("(SELECT m.{col} FROM canvas_conversation_message m WHERE m.conversation_id = x.id "
         "ORDER BY m.created_at DESC, m.id DESC LIMIT 1)")
CONVERSATIONS = Table(
    Conversation,
    f"x.id, x.subject, {_LAST.format(col='body')}, {_LAST.format(col='created_at')} AS "
    "last_message_at, (SELECT count(*) FROM canvas_conversation_message m WHERE "
    "m.conversation_id = x.id)", "canvas_conversation x")
_PARTICIPATES = ("EXISTS (SELECT 1 FROM canvas_conversation_participant p "
                 "WHERE p.conversation_id = x.id AND p.user_id = ?)")


def add_conversation(session: Session, *, participant_ids: Sequence[int], author_id: int,
                     body: str, created_at: Any, subject: str | None = None,
                     id: int | None = None) -> int:
    """A conversation between `participant_ids` (the author among them) opened by one message
    of `author_id`; returns its id."""
    at = instant(created_at)
    conv_id: int = sql.scalar(session, "INSERT INTO canvas_conversation (id, subject, created_at) "
                                       "VALUES (?, ?, ?) RETURNING id", (id, subject, at))
    people = list(dict.fromkeys([author_id, *participant_ids]))
    sql.cursor(session).executemany(
        "INSERT INTO canvas_conversation_participant (conversation_id, user_id) VALUES (?, ?)",
        [(conv_id, uid) for uid in people])
    add_message(session, conversation_id=conv_id, author_id=author_id, body=body, created_at=at)
    return conv_id


def add_message(session: Session, *, conversation_id: int, author_id: int, body: str,
                created_at: Any) -> CanvasConversationMessage:
    """A further message in a conversation."""
    return insert(session, CanvasConversationMessage(
        conversation_id=conversation_id, author_id=author_id, body=text("body", body),
        created_at=instant(created_at)))


def conversations_of(user_id: int) -> Listing:
    """Conversations the user takes part in, newest message first."""
    return Listing(CONVERSATIONS, _PARTICIPATES, "last_message_at DESC, x.id DESC", (user_id,))


def conversation_for(session: Session, conversation_id: int, user_id: int) -> Conversation:
    """A conversation, NOT_FOUND when missing, PERMISSION_DENIED unless the user takes part."""
    row = sql.run(session, f"SELECT {CONVERSATIONS.columns}, {_PARTICIPATES} FROM "
                           f"{CONVERSATIONS.tables} WHERE x.id = ?",
                  (user_id, conversation_id)).fetchone()
    if row is None:
        raise not_found(f"conversation {conversation_id} not found")
    if not row[-1]:
        raise denied(f"you are not a participant of conversation {conversation_id}")
    return Conversation._make(row[:-1])


def conversation_views(session: Session, convs: list[Conversation]) -> list[dict[str, Any]]:
    """`Conv` projections, participants by user id (one query per batch)."""
    people: dict[int, list[dict[str, Any]]] = {c.id: [] for c in convs}
    rows = sql.run(session, "SELECT p.conversation_id, u.id, u.name FROM "
                            "canvas_conversation_participant p JOIN canvas_user u ON u.id = p.user_id "
                            f"WHERE p.conversation_id IN ({sql.marks(len(convs))})",
                   [c.id for c in convs]).fetchall()
    for conv_id, uid, name in sorted(rows):
        people[conv_id].append({"id": uid, "name": name})
    return [{"id": c.id, "subject": c.subject, "participants": people[c.id],
             "last_message": c.last_message, "last_message_at": c.last_message_at,
             "message_count": c.message_count} for c in convs]


def message_views(session: Session, conversation_id: int, limit: int) -> list[dict[str, Any]]:
    """The newest `limit` messages of a conversation, newest first."""
    rows = sql.run(session, "SELECT id, author_id, body, created_at FROM "
                            "canvas_conversation_message WHERE conversation_id = ? "
                            "ORDER BY created_at DESC, id DESC LIMIT ?", (conversation_id, limit))
    return [{"id": mid, "author_id": author, "body": body, "created_at": at}
            for mid, author, body, at in rows]


def resolve_recipients(session: Session, sender: User, recipients: Sequence[str]) -> list[int]:
    """User ids of `recipients` (user ids, or `course_<id>` for every active member of a course
    the sender teaches), the sender left out. Users must share a course with the sender (admins
    may write to anyone)."""
    people: list[int] = []
    for raw in recipients:
        token = raw.strip()
        if course := _COURSE.fullmatch(token):
            access = course_access(session, sender, int(course.group(1)))
            require_staff(access, "message the whole course")
            people += course_members(session, access.course.id)
        elif _USER_ID.fullmatch(token):
            user_id = int(token)
            if get_user(session, user_id) is None:
                raise invalid(f"unknown recipient '{raw}': no user {user_id}")
            if not sender.is_admin and user_id != sender.id and not shares_course(
                    session, sender.id, user_id):
                raise denied(f"you share no course with user {user_id}")
            people.append(user_id)
        else:
            raise invalid(f"recipient '{raw}' is neither a user id nor course_<id>")
    found = [uid for uid in dict.fromkeys(people) if uid != sender.id]
    if not found:
        raise invalid("recipients name nobody but yourself")
    return found
