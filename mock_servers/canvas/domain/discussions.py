"""Canvas discussion topics, announcements (topics with `is_announcement`) and their replies."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from sqlmodel import Session

from mock_servers.canvas.domain.base import Table, insert, insert_many, text
from mock_servers.canvas.models import CanvasDiscussionEntry, CanvasDiscussionTopic
from mock_servers.core import sql
from mock_servers.core.times import instant


class Topic(NamedTuple):
    """A topic with its author's name and its number of replies."""

    id: int
    course_id: int
    title: str
    message: str
    posted_at: str
    author_id: int
    is_announcement: int
    published: int
    author: str
    replies: int


TOPICS = Table(Topic, "x.id, x.course_id, x.title, x.message, x.posted_at, x.author_id, "
                      "x.is_announcement, x.published, u.name, (SELECT count(*) FROM "
                      "canvas_discussion_entry d WHERE d.topic_id = x.id)",
               "canvas_discussion_topic x JOIN canvas_user u ON u.id = x.author_id")


def topic_row(*, course_id: int, title: str, message: str, posted_at: Any, author_id: int,
              is_announcement: bool = False, published: bool = True,
              id: int | None = None) -> dict[str, Any]:
    return {"id": id, "course_id": course_id, "title": text("title", title), "message": message,
            "posted_at": instant(posted_at), "author_id": author_id,
            "is_announcement": is_announcement, "published": published}


def add_topic(session: Session, **values: Any) -> CanvasDiscussionTopic:
    """A discussion topic, or an announcement with `is_announcement` (see `topic_row`)."""
    return insert(session, CanvasDiscussionTopic(**topic_row(**values)))


def add_topics(session: Session, rows: Iterable[Mapping[str, Any]]) -> int:
    """Many topics in one statement, each given as `add_topic`'s keyword arguments."""
    return insert_many(session, CanvasDiscussionTopic, topic_row, rows)


def add_entry(session: Session, *, topic_id: int, user_id: int, message: str,
              created_at: Any) -> CanvasDiscussionEntry:
    """A reply to a discussion topic."""
    return insert(session, CanvasDiscussionEntry(topic_id=topic_id, user_id=user_id,
                                                 message=text("message", message),
                                                 created_at=instant(created_at)))


def topic_view(t: Topic) -> dict[str, Any]:
    return {"id": t.id, "course_id": t.course_id, "title": t.title, "message": t.message,
            "posted_at": t.posted_at, "author": {"id": t.author_id, "name": t.author},
            "is_announcement": bool(t.is_announcement), "discussion_subentry_count": t.replies,
            "published": bool(t.published)}


def entry_views(session: Session, topic_id: int, limit: int) -> list[dict[str, Any]]:
    """The first `limit` replies of a topic, oldest first, with their authors."""
    rows = sql.run(session, "SELECT e.id, e.user_id, u.name, e.message, e.created_at "
                            "FROM canvas_discussion_entry e JOIN canvas_user u ON u.id = e.user_id "
                            "WHERE e.topic_id = ? ORDER BY e.created_at, e.id LIMIT ?",
                   (topic_id, limit))
    return [{"id": eid, "user": {"id": uid, "name": name}, "message": message,
             "created_at": created_at} for eid, uid, name, message, created_at in rows]


def entry_view(e: CanvasDiscussionEntry) -> dict[str, Any]:
    return {"id": e.id, "topic_id": e.topic_id, "user_id": e.user_id, "message": e.message,
            "created_at": e.created_at}
