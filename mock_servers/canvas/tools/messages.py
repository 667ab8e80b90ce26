"""Canvas tools: your conversations, notifications and calendar."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from mock_servers.canvas.domain.base import paged
from mock_servers.canvas.domain.calendar import bound, event_view, events_for
from mock_servers.canvas.domain.messages import (
    MESSAGES_SHOWN,
    add_conversation,
    add_notifications,
    conversation_for,
    conversation_views,
    conversations_of,
    message_views,
    notification_view,
    notifications_of,
    resolve_recipients,
)
from mock_servers.canvas.tools.common import (
    PAGE_SIZE,
    Id,
    Page,
    PerPage,
    me,
    now_z,
    paged_list,
    toolbox,
)
from mock_servers.core.errors import invalid
from mock_servers.core.toolkit import Call

MAX_RECIPIENTS = 100
DAY_OR_INSTANT = "YYYY-MM-DD (the whole day in your time zone) or an ISO 8601 date-time with Z or an offset"


@toolbox.tool(rw="read")
@paged_list
def canvas_list_conversations(call: Call, page: Page = 1, per_page: PerPage = PAGE_SIZE) -> dict[str, Any]:
    """Conversations you take part in, newest message first: id, subject, participants,
    last_message, last_message_at, message_count."""
    return paged(call.session, conversations_of(me(call).id), page, per_page,
                 lambda rows: conversation_views(call.session, rows))


@toolbox.tool(rw="read")
def canvas_get_conversation(
    call: Call,
    conversation_id: Annotated[Id, Field(description="Conversation id")],
) -> dict[str, Any]:
    """One of your conversations with its newest 100 messages, newest first. Only
    participants may read a conversation (else PERMISSION_DENIED)."""
    conv = conversation_for(call.session, conversation_id, me(call).id)
    return conversation_views(call.session, [conv])[0] | {
        "messages": message_views(call.session, conv.id, MESSAGES_SHOWN)}


@toolbox.tool(rw="write")
def canvas_create_conversation(
    call: Call,
    recipients: Annotated[list[str], Field(min_length=1, max_length=MAX_RECIPIENTS, description=(
        "User ids (\"12\") or course_<id> for every active member of a course you teach"))],
    body: Annotated[str, Field(description="The first message")],
    subject: Annotated[str | None, Field(description="Subject")] = None,
) -> dict[str, Any]:
    """Start a conversation between you and the recipients (people who share a course with
    you); each recipient is notified. An unknown recipient is INVALID_ARGUMENT."""
    user = me(call)
    people = resolve_recipients(call.session, user, recipients)
    if not body.strip():
        raise invalid("body must not be empty")
    conv_id = add_conversation(call.session, participant_ids=people, author_id=user.id, body=body,
                               created_at=now_z(call), subject=subject)
    add_notifications(call.session, [
        {"user_id": uid, "subject": f"New message from {user.name}", "message": subject or body,
         "notification_type": "conversation_message", "created_at": now_z(call)} for uid in people])
    return conversation_views(call.session, [conversation_for(call.session, conv_id, user.id)])[0]


@toolbox.tool(rw="read")
@paged_list
def canvas_list_notifications(call: Call, page: Page = 1, per_page: PerPage = PAGE_SIZE) -> dict[str, Any]:
    """Your notifications, newest first: id, subject, message, notification_type, created_at,
    read."""
    return paged(call.session, notifications_of(me(call).id), page, per_page,
                 lambda rows: [notification_view(n) for n in rows])


@toolbox.tool(rw="read")
@paged_list
def canvas_list_calendar_events(
    call: Call,
    start_date: Annotated[str | None, Field(description=f"Events ending at or after: {DAY_OR_INSTANT}")] = None,
    end_date: Annotated[str | None, Field(description=f"Events starting before: {DAY_OR_INSTANT}")] = None,
    page: Page = 1,
    per_page: PerPage = PAGE_SIZE,
) -> dict[str, Any]:
    """Calendar events of your courses and your own events that overlap the range (open ends
    when omitted), by start time: id, title, description, start_at, end_at, location_name,
    context_code (course_<id> or user_<id>)."""
    user = me(call)
    start = None if start_date is None else bound(start_date, user.time_zone, end=False)
    end = None if end_date is None else bound(end_date, user.time_zone, end=True)
    if start is not None and end is not None and end <= start:
        raise invalid(f"end_date {end_date} is not after start_date {start_date}")
    return paged(call.session, events_for(user.id, start, end), page, per_page,
                 lambda rows: [event_view(e) for e in rows])
