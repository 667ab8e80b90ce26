"""Canvas tools: announcements, discussion topics and replies."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from mock_servers.canvas.domain.base import NEWEST_FIRST, paged
from mock_servers.canvas.domain.courses import course_items, in_course, require_active
from mock_servers.canvas.domain.discussions import TOPICS, add_entry, entry_view, entry_views, topic_view
from mock_servers.canvas.tools.common import (
    PAGE_SIZE,
    CourseId,
    Page,
    PerPage,
    TopicId,
    access,
    now_z,
    paged_list,
    toolbox,
)
from mock_servers.core.errors import denied
from mock_servers.core.toolkit import Call

TOPIC_ENTRIES = 50  # replies embedded in canvas_get_discussion_topic


def _topics(call: Call, course_id: int, announcements: bool, page: int,
            per_page: int) -> dict[str, Any]:
    topics = course_items(TOPICS, access(call, course_id), NEWEST_FIRST,
                          "x.is_announcement = ?", (announcements,))
    return paged(call.session, topics, page, per_page, lambda rows: [topic_view(t) for t in rows])


@toolbox.tool(rw="read", core=True)
@paged_list
def canvas_list_announcements(call: Call, course_id: CourseId, page: Page = 1,
                              per_page: PerPage = PAGE_SIZE) -> dict[str, Any]:
    """Announcements of a course, newest first (posted_at desc, then id desc), with full
    message."""
    return _topics(call, course_id, True, page, per_page)


@toolbox.tool(rw="read")
@paged_list
def canvas_list_discussion_topics(call: Call, course_id: CourseId, page: Page = 1,
                                  per_page: PerPage = PAGE_SIZE) -> dict[str, Any]:
    """Discussion topics of a course (announcements excluded), newest first (posted_at desc,
    then id desc)."""
    return _topics(call, course_id, False, page, per_page)


@toolbox.tool(rw="read")
def canvas_get_discussion_topic(call: Call, course_id: CourseId, topic_id: TopicId) -> dict[str, Any]:
    """One discussion topic or announcement with its first 50 replies (oldest first) and
    entries_total, the number of replies."""
    topic = in_course(call.session, TOPICS, topic_id, access(call, course_id), "topic")
    return topic_view(topic) | {"entries": entry_views(call.session, topic_id, TOPIC_ENTRIES),
                                "entries_total": topic.replies}


@toolbox.tool(rw="write")
def canvas_post_to_discussion(
    call: Call,
    course_id: CourseId,
    topic_id: TopicId,
    message: Annotated[str, Field(description="Reply text (HTML allowed)")],
) -> dict[str, Any]:
    """Reply to a discussion topic or announcement of a course you take part in (observers
    cannot post). Stores the reply and returns it."""
    found = access(call, course_id)
    if found.observer:
        raise denied(f"observers cannot post in course {course_id}")
    require_active(found, now_z(call))
    in_course(call.session, TOPICS, topic_id, found, "topic")
    entry = add_entry(call.session, topic_id=topic_id, user_id=found.user.id, message=message,
                      created_at=now_z(call))
    return entry_view(entry)
