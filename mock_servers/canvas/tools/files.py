"""Canvas tools: course files, folders and wiki pages."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from mock_servers.canvas.domain.base import Listing, paged
from mock_servers.canvas.domain.courses import course_items
from mock_servers.canvas.domain.files import (
    FILES,
    FOLDERS,
    PAGE_ORDER,
    PAGES,
    file_view,
    folder_in,
    folder_views,
    get_file,
    page_at,
    page_brief,
    page_view,
)
from mock_servers.canvas.tools.common import (
    PAGE_SIZE,
    CourseId,
    Id,
    Page,
    PerPage,
    access,
    me,
    paged_list,
    toolbox,
)
from mock_servers.core.errors import denied, not_found
from mock_servers.core.toolkit import Call

BY_NAME = "x.display_name COLLATE NOCASE, x.id"


@toolbox.tool(rw="read")
@paged_list
def canvas_list_files(
    call: Call,
    course_id: CourseId,
    folder_id: Annotated[Id | None, Field(description="Only files in this folder of the course")] = None,
    page: Page = 1,
    per_page: PerPage = PAGE_SIZE,
) -> dict[str, Any]:
    """Files of a course (or of one of its folders) by name: id, folder_id, display_name,
    filename, content_type, size, created_at, url."""
    access(call, course_id)
    if folder_id is None:
        listing = Listing(FILES, "x.course_id = ?", BY_NAME, (course_id,))
    else:
        folder_in(call.session, folder_id, course_id)
        listing = Listing(FILES, "x.course_id = ? AND x.folder_id = ?", BY_NAME, (course_id, folder_id))
    return paged(call.session, listing, page, per_page,
                 lambda rows: [file_view(f) for f in rows])


@toolbox.tool(rw="read")
def canvas_get_file(call: Call, file_id: Annotated[Id, Field(description="File id")]) -> dict[str, Any]:
    """One file: of a course you are in, or one of your own files (admins see all)."""
    user = me(call)
    found = get_file(call.session, file_id)
    if found is None:
        raise not_found(f"file {file_id} not found")
    if found.course_id is not None:
        access(call, found.course_id)
    elif found.user_id != user.id and not user.is_admin:
        raise denied(f"file {file_id} belongs to another user")
    return file_view(found)


@toolbox.tool(rw="read")
@paged_list
def canvas_list_folders(call: Call, course_id: CourseId, page: Page = 1,
                        per_page: PerPage = PAGE_SIZE) -> dict[str, Any]:
    """Folders of a course by full path: id, name, full_name, parent_folder_id, files_count,
    folders_count."""
    access(call, course_id)
    listing = Listing(FOLDERS, "x.course_id = ?", "x.full_name, x.id", (course_id,))
    return paged(call.session, listing, page, per_page, lambda rows: folder_views(call.session, rows))


@toolbox.tool(rw="read")
@paged_list
def canvas_list_pages(call: Call, course_id: CourseId, page: Page = 1,
                      per_page: PerPage = PAGE_SIZE) -> dict[str, Any]:
    """Wiki pages of a course by title (students see published ones): url, title, created_at,
    updated_at, published, front_page. Read one with canvas_get_page."""
    pages = course_items(PAGES, access(call, course_id), PAGE_ORDER)
    return paged(call.session, pages, page, per_page, lambda rows: [page_brief(p) for p in rows])


@toolbox.tool(rw="read")
def canvas_get_page(
    call: Call,
    course_id: CourseId,
    page_url: Annotated[str, Field(description="The page's url as listed, e.g. week-1-cells")],
) -> dict[str, Any]:
    """One wiki page of a course with its body (HTML)."""
    return page_view(page_at(call.session, access(call, course_id), page_url))
