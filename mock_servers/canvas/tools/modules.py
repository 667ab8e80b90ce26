"""Canvas tools: modules, their items and your progress through them."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from mock_servers.canvas.domain.base import Listing, paged
from mock_servers.canvas.domain.courses import CourseAccess, course_items, in_course, require_active
from mock_servers.canvas.domain.modules import (
    BY_POSITION,
    ITEMS,
    MAX_INDENT,
    MODULES,
    Module,
    add_module,
    add_module_item,
    item_in,
    item_views,
    mark_complete,
    module_views,
)
from mock_servers.canvas.tools.common import (
    INSTANT,
    PAGE_SIZE,
    CourseId,
    Id,
    ItemId,
    ModuleId,
    Page,
    PerPage,
    access,
    now_z,
    paged_list,
    staff_write,
    toolbox,
)
from mock_servers.core.errors import denied
from mock_servers.core.toolkit import Call
from mock_servers.core.types import Int

ItemType = Literal["Assignment", "Quiz", "File", "Page", "Discussion", "ExternalUrl", "ExternalTool"]
Position = Annotated[Int | None, Field(ge=1, description="1-based place (default: last)")]


def _module(call: Call, found: CourseAccess, module_id: int) -> Module:
    return in_course(call.session, MODULES, module_id, found, "module")


@toolbox.tool(rw="read")
@paged_list
def canvas_list_modules(call: Call, course_id: CourseId, page: Page = 1,
                        per_page: PerPage = PAGE_SIZE) -> dict[str, Any]:
    """Modules of a course by position; students see published ones only, and items_count
    counts the items you can see."""
    found = access(call, course_id)
    return paged(call.session, course_items(MODULES, found, BY_POSITION), page, per_page,
                 lambda rows: module_views(call.session, rows, found.staff))


@toolbox.tool(rw="read")
def canvas_get_module(call: Call, course_id: CourseId, module_id: ModuleId) -> dict[str, Any]:
    """One module of a course (NOT_FOUND if it is not in that course)."""
    found = access(call, course_id)
    return module_views(call.session, [_module(call, found, module_id)], found.staff)[0]


@toolbox.tool(rw="read")
@paged_list
def canvas_list_module_items(call: Call, course_id: CourseId, module_id: ModuleId,
                             page: Page = 1, per_page: PerPage = PAGE_SIZE) -> dict[str, Any]:
    """Items of a module by position, each with completed: whether you have completed it."""
    found = access(call, course_id)
    module = _module(call, found, module_id)
    shown = "x.module_id = ?" if found.staff else "x.module_id = ? AND x.published = 1"
    return paged(call.session, Listing(ITEMS, shown, BY_POSITION, (module.id,)), page, per_page,
                 lambda rows: item_views(call.session, rows, course_id, found.user.id))


@toolbox.tool(rw="read")
def canvas_get_module_item(call: Call, course_id: CourseId, module_id: ModuleId,
                           item_id: ItemId) -> dict[str, Any]:
    """One item of a module of a course (NOT_FOUND unless it is in that module and course)."""
    found = access(call, course_id)
    item = item_in(call.session, found, _module(call, found, module_id), item_id)
    return item_views(call.session, [item], course_id, found.user.id)[0]


@toolbox.tool(rw="write", idempotent=True)
def canvas_mark_module_item_complete(call: Call, course_id: CourseId, module_id: ModuleId,
                                     item_id: ItemId) -> dict[str, Any]:
    """Mark an item done for yourself only (other users' progress is untouched). The module
    must be unlocked, its prerequisite modules complete and, when it requires sequential
    progress, every earlier item complete (else FAILED_PRECONDITION). Observers cannot."""
    found = access(call, course_id)
    if found.observer:
        raise denied(f"observers cannot complete items in course {course_id}")
    require_active(found, now_z(call))
    module = _module(call, found, module_id)
    item = item_in(call.session, found, module, item_id)
    mark_complete(call.session, found, module, item, now_z(call))
    return item_views(call.session, [item], course_id, found.user.id)[0]


@toolbox.tool(rw="write")
def canvas_create_module(
    call: Call,
    course_id: CourseId,
    name: Annotated[str, Field(description="Module name")],
    position: Position = None,
    unlock_at: Annotated[str | None, Field(description=f"Locked until: {INSTANT}")] = None,
    require_sequential_progress: Annotated[bool, Field(
        description="Items must be completed in order")] = False,
    prerequisite_module_ids: Annotated[list[Id] | None, Field(
        max_length=50, description="Modules of the course that come before it and must be completed first")] = None,
    published: Annotated[bool, Field(description="Visible to students")] = False,
) -> dict[str, Any]:
    """Create a module in a course you teach (teachers, TAs, admins), at the end or at
    position (later modules move down)."""
    staff_write(call, course_id, "create modules")
    module = add_module(call.session, course_id=course_id, name=name, position=position,
                        unlock_at=unlock_at, require_sequential_progress=require_sequential_progress,
                        prerequisite_module_ids=prerequisite_module_ids or [], published=published)
    return module_views(call.session, [module], True)[0]


@toolbox.tool(rw="write")
def canvas_create_module_item(
    call: Call,
    course_id: CourseId,
    module_id: ModuleId,
    title: Annotated[str, Field(description="Item title")],
    type: Annotated[ItemType, Field(description="What the item shows")],
    content_id: Annotated[Id | None, Field(
        description="Id of the assignment, quiz, file, page or discussion (of this course)")] = None,
    html_url: Annotated[str | None, Field(description="Link shown for the item (default: its Canvas page)")] = None,
    url: Annotated[str | None, Field(description="http(s) target of ExternalUrl and ExternalTool items")] = None,
    position: Position = None,
    indent: Annotated[Int, Field(ge=0, le=MAX_INDENT, description="Indent level")] = 0,
    published: Annotated[bool, Field(description="Visible to students")] = False,
) -> dict[str, Any]:
    """Add an item to a module of a course you teach. Content items need the content_id of
    content of this course; ExternalUrl and ExternalTool items need a url. The module's
    items_count grows by one."""
    found = staff_write(call, course_id, "edit modules")
    module = _module(call, found, module_id)
    item = add_module_item(call.session, module_id=module.id, title=title, type=type,
                           content_id=content_id, html_url=html_url, url=url, position=position,
                           indent=indent, published=published)
    return item_views(call.session, [item], course_id, found.user.id)[0]
