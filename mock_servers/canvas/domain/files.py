"""Canvas files (bytes stored in the world), course folders and wiki pages."""

from __future__ import annotations

import re
from typing import Any, NamedTuple

from sqlmodel import Session

from mock_servers.canvas.domain.base import count_by, fetch_one, insert, table, text
from mock_servers.canvas.domain.courses import CourseAccess
from mock_servers.canvas.models import CanvasFile, CanvasFolder, CanvasPage
from mock_servers.core import sql
from mock_servers.core.errors import invalid, not_found
from mock_servers.core.times import instant, optional_instant


class Folder(NamedTuple):
    id: int
    course_id: int
    parent_folder_id: int | None
    name: str
    full_name: str


class File(NamedTuple):
    """A file without its bytes."""

    id: int
    course_id: int | None
    user_id: int | None
    folder_id: int | None
    display_name: str
    filename: str
    content_type: str
    size: int
    created_at: str


class Page(NamedTuple):
    id: int
    course_id: int
    url: str
    title: str
    body: str | None
    created_at: str
    updated_at: str
    published: int
    front_page: int


FOLDERS = table(Folder, "canvas_folder")
FILES = table(File, "canvas_file")
PAGES = table(Page, "canvas_page")
PAGE_ORDER = "x.title, x.id"
_SLUG = re.compile(r"[^a-z0-9]+")


# ---------------------------------------------------------------- folders and files

def add_folder(session: Session, *, course_id: int, name: str, parent_folder_id: int | None = None,
               id: int | None = None) -> CanvasFolder:
    """A folder of a course's files, at the top or inside `parent_folder_id` (same course)."""
    full_name = text("name", name)
    if "/" in name:
        raise invalid(f"folder name '{name}' must not contain '/'")
    if parent_folder_id is not None:
        parent = fetch_one(session, FOLDERS, "x.id = ?", (parent_folder_id,))
        if parent is None or parent.course_id != course_id:
            raise not_found(f"folder {parent_folder_id} not found in course {course_id}")
        full_name = f"{parent.full_name}/{name}"
    return insert(session, CanvasFolder(id=id, course_id=course_id, name=name, full_name=full_name,
                                        parent_folder_id=parent_folder_id))


def add_file(session: Session, *, display_name: str, data: bytes, created_at: Any,
             content_type: str = "application/octet-stream", course_id: int | None = None,
             user_id: int | None = None, folder_id: int | None = None,
             filename: str | None = None, id: int | None = None) -> CanvasFile:
    """A stored file, in a course (`course_id`, optionally in one of its folders) or owned by a
    user (`user_id`)."""
    if (course_id is None) == (user_id is None):
        raise invalid("a file belongs to exactly one of a course or a user")
    if folder_id is not None and not sql.scalar(
            session, "SELECT 1 FROM canvas_folder WHERE id = ? AND course_id IS ?", (folder_id, course_id)):
        raise not_found(f"folder {folder_id} not found in course {course_id}")
    return insert(session, CanvasFile(
        id=id, course_id=course_id, user_id=user_id, folder_id=folder_id,
        display_name=text("display_name", display_name), filename=filename or display_name,
        content_type=content_type, size=len(data), created_at=instant(created_at), data=data))


def folder_in(session: Session, folder_id: int, course_id: int) -> Folder:
    folder = fetch_one(session, FOLDERS, "x.id = ?", (folder_id,))
    if folder is None or folder.course_id != course_id:
        raise not_found(f"folder {folder_id} not found in course {course_id}")
    return folder


def get_file(session: Session, file_id: int) -> File | None:
    return fetch_one(session, FILES, "x.id = ?", (file_id,))


def file_view(f: File) -> dict[str, Any]:
    return {"id": f.id, "folder_id": f.folder_id, "display_name": f.display_name,
            "filename": f.filename, "content_type": f.content_type, "size": f.size,
            "created_at": f.created_at, "url": f"/files/{f.id}/download"}


def folder_views(session: Session, folders: list[Folder]) -> list[dict[str, Any]]:
    """Folders with how many files and subfolders each holds (two queries per batch)."""
    ids = [f.id for f in folders]
    files = count_by(session, "SELECT folder_id, count(*) FROM canvas_file WHERE folder_id IN "
                              "({marks}) GROUP BY folder_id", ids)
    subfolders = count_by(session, "SELECT parent_folder_id, count(*) FROM canvas_folder WHERE "
                                   "parent_folder_id IN ({marks}) GROUP BY parent_folder_id", ids)
    return [{"id": f.id, "name": f.name, "full_name": f.full_name,
             "parent_folder_id": f.parent_folder_id, "files_count": files[f.id],
             "folders_count": subfolders[f.id]} for f in folders]


# ---------------------------------------------------------------- pages

def slug(title: str) -> str:
    """The url of a page titled `title`: `Week 1: Cells` -> `week-1-cells`."""
    return _SLUG.sub("-", title.lower()).strip("-") or "page"


def add_page(session: Session, *, course_id: int, title: str, created_at: Any,
             body: str | None = None, url: str | None = None, updated_at: Any = None,
             published: bool = True, front_page: bool = False, id: int | None = None) -> CanvasPage:
    """A wiki page; `url` defaults to the slug of the title. A course has one front page."""
    if front_page and sql.scalar(session, "SELECT 1 FROM canvas_page WHERE course_id = ? AND "
                                          "front_page = 1", (course_id,)):
        raise invalid(f"course {course_id} already has a front page")
    created = instant(created_at)
    return insert(session, CanvasPage(
        id=id, course_id=course_id, url=url or slug(title), title=text("title", title), body=body,
        created_at=created, updated_at=optional_instant(updated_at) or created,
        published=published, front_page=front_page))


def page_at(session: Session, access: CourseAccess, url: str) -> Page:
    """The page of the course at `url`; unpublished pages exist only for staff."""
    page = fetch_one(session, PAGES, "x.course_id = ? AND x.url = ?", (access.course.id, url))
    if page is None or not (page.published or access.staff):
        raise not_found(f"page '{url}' not found in course {access.course.id}")
    return page


def page_brief(p: Page) -> dict[str, Any]:
    return {"url": p.url, "title": p.title, "created_at": p.created_at, "updated_at": p.updated_at,
            "published": bool(p.published), "front_page": bool(p.front_page)}


def page_view(p: Page) -> dict[str, Any]:
    return {"url": p.url, "title": p.title, "body": p.body, "created_at": p.created_at,
            "updated_at": p.updated_at, "published": bool(p.published),
            "front_page": bool(p.front_page)}
