"""Canvas modules: ordered units of a course whose items point at its content or at external
links, and each user's own progress through them."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from sqlmodel import Session

from mock_servers.canvas.domain.base import choice, count_by, fetch_one, ids_of, ids_text, table, text
from mock_servers.canvas.domain.courses import CourseAccess
from mock_servers.core import sql
from mock_servers.core.errors import Code, ToolFailure, invalid, not_found
from mock_servers.core.times import instant, optional_instant

ITEM_TYPES = ("Assignment", "Quiz", "File", "Page", "Discussion", "ExternalUrl", "ExternalTool")
EXTERNAL_TYPES = ("ExternalUrl", "ExternalTool")
CONTENT_TABLES = {"Assignment": "canvas_assignment", "Quiz": "canvas_quiz", "File": "canvas_file",
                  "Page": "canvas_page", "Discussion": "canvas_discussion_topic"}
MAX_INDENT = 5
BY_POSITION = "x.position, x.id"


class Module(NamedTuple):
    id: int
    course_id: int
    name: str
    position: int
    unlock_at: str | None
    require_sequential_progress: int
    prerequisite_module_ids: str
    published: int


class Item(NamedTuple):
    id: int
    module_id: int
    title: str
    type: str
    content_id: int | None
    html_url: str | None
    url: str | None
    position: int
    indent: int
    published: int


MODULES = table(Module, "canvas_module")
ITEMS = table(Item, "canvas_module_item")
_INSERT_MODULE = (f"INSERT INTO canvas_module ({', '.join(Module._fields)}) "
                  f"VALUES ({sql.marks(len(Module._fields))}) RETURNING id")
_INSERT_ITEM = (f"INSERT INTO canvas_module_item ({', '.join(Item._fields)}) "
                f"VALUES ({sql.marks(len(Item._fields))}) RETURNING id")


def _slot(session: Session, tbl: str, parent: str, parent_id: int, position: int | None) -> int:
    """The position of a new row among its siblings: at the end by default, else `position`
    (at most one past the end)."""
    end = sql.scalar(session, f"SELECT coalesce(max(position), 0) + 1 FROM {tbl} WHERE {parent} = ?",
                     (parent_id,))
    if position is not None and position < 1:
        raise invalid(f"position {position} must be at least 1")
    return end if position is None else min(position, end)


def _make_room(session: Session, tbl: str, parent: str, parent_id: int, place: int) -> None:
    """Move the siblings at `place` and after down one place."""
    sql.run(session, f"UPDATE {tbl} SET position = position + 1 WHERE {parent} = ? AND position >= ?",
            (parent_id, place))


def add_module(session: Session, *, course_id: int, name: str, position: int | None = None,
               unlock_at: Any = None, require_sequential_progress: bool = False,
               prerequisite_module_ids: Sequence[int] = (), published: bool = True,
               id: int | None = None) -> Module:
    """A module of the course, at the end or at `position`; prerequisites must be modules of
    the course placed before it."""
    text("name", name)
    unlock = optional_instant(unlock_at)
    prerequisites = list(dict.fromkeys(prerequisite_module_ids))
    found = {m.id: m for m in sql.rows(session, Module, MODULES.select(
        f"x.course_id = ? AND x.id IN ({sql.marks(len(prerequisites))})"), (course_id, *prerequisites))}
    missing = [str(m) for m in prerequisites if m not in found]
    if missing:
        raise not_found(f"prerequisite module(s) {', '.join(missing)} not found in course {course_id}")
    place = _slot(session, "canvas_module", "course_id", course_id, position)
    late = [str(m.id) for m in found.values() if m.position >= place]
    if late:
        raise invalid(f"prerequisite module(s) {', '.join(late)} do not come before position {place}")
    _make_room(session, "canvas_module", "course_id", course_id, place)
    values = (course_id, name, place, unlock, require_sequential_progress,
              ids_text(prerequisites), published)
    return Module(sql.scalar(session, _INSERT_MODULE, (id, *values)), *values)


def _check_target(session: Session, course_id: int, kind: str, content_id: int | None,
                  url: str | None) -> None:
    """Content items point at content of the course; external items at an http(s) url."""
    if kind in EXTERNAL_TYPES:
        if content_id is not None:
            raise invalid(f"{kind} items take a url, not a content_id")
        if not url or not url.startswith(("http://", "https://")):
            raise invalid(f"{kind} items need a url starting with http:// or https://")
        return
    if url is not None:
        raise invalid(f"url is only for {' and '.join(EXTERNAL_TYPES)} items")
    if content_id is None:
        raise invalid(f"{kind} items need the content_id of the {kind.lower()}")
    if not sql.scalar(session, f"SELECT 1 FROM {CONTENT_TABLES[kind]} WHERE id = ? AND course_id = ?",
                      (content_id, course_id)):
        raise not_found(f"{kind.lower()} {content_id} not found in course {course_id}")


def add_module_item(session: Session, *, module_id: int, title: str, type: str,
                    content_id: int | None = None, html_url: str | None = None,
                    url: str | None = None, position: int | None = None, indent: int = 0,
                    published: bool = True, id: int | None = None) -> Item:
    """An item of a module, at its end or at `position`."""
    module = fetch_one(session, MODULES, "x.id = ?", (module_id,))
    if module is None:
        raise not_found(f"module {module_id} not found")
    text("title", title)
    choice("type", type, ITEM_TYPES)
    if not 0 <= indent <= MAX_INDENT:
        raise invalid(f"indent {indent} must be between 0 and {MAX_INDENT}")
    _check_target(session, module.course_id, type, content_id, url)
    place = _slot(session, "canvas_module_item", "module_id", module_id, position)
    _make_room(session, "canvas_module_item", "module_id", module_id, place)
    values = (module_id, title, type, content_id, html_url, url, place, indent, published)
    return Item(sql.scalar(session, _INSERT_ITEM, (id, *values)), *values)


def add_progress(session: Session, *, user_id: int, item_id: int, completed_at: Any) -> None:
    """Record that a user completed an item (kept once)."""
    sql.run(session, "INSERT INTO canvas_module_progress (user_id, item_id, completed_at) "
                     "VALUES (?, ?, ?) ON CONFLICT (user_id, item_id) DO NOTHING",
            (user_id, item_id, instant(completed_at)))


def item_in(session: Session, access: CourseAccess, module: Module, item_id: int) -> Item:
    """An item of the module; unpublished items exist only for staff."""
    item = fetch_one(session, ITEMS, "x.id = ? AND x.module_id = ?", (item_id, module.id))
    if item is None or not (item.published or access.staff):
        raise not_found(f"item {item_id} not found in module {module.id} of course {access.course.id}")
    return item


def _incomplete(session: Session, user_id: int, where: str, params: Sequence[Any]) -> int:
    return sql.scalar(session, "SELECT count(*) FROM canvas_module_item i WHERE i.published = 1 "
                               f"AND {where} AND NOT EXISTS (SELECT 1 FROM canvas_module_progress "
                               "p WHERE p.item_id = i.id AND p.user_id = ?)", (*params, user_id))


def mark_complete(session: Session, access: CourseAccess, module: Module, item: Item,
                  now_z: str) -> None:
    """Record the caller's completion of an item once the module is unlocked, its prerequisite
    modules complete and, in a sequential module, every earlier item complete."""
    me = access.user.id
    if module.unlock_at is not None and now_z < module.unlock_at:
        raise ToolFailure(Code.FAILED_PRECONDITION,
                          f"module {module.id} is locked until {module.unlock_at}")
    for prerequisite in ids_of(module.prerequisite_module_ids):
        if _incomplete(session, me, "i.module_id = ?", (prerequisite,)):
            raise ToolFailure(Code.FAILED_PRECONDITION,
                              f"complete prerequisite module {prerequisite} first")
    if module.require_sequential_progress and _incomplete(
            session, me, "i.module_id = ? AND i.position < ?", (module.id, item.position)):
        raise ToolFailure(Code.FAILED_PRECONDITION,
                          f"module {module.id} must be completed in order; finish the earlier items first")
    add_progress(session, user_id=me, item_id=item.id, completed_at=now_z)


def module_views(session: Session, modules: list[Module], staff: bool) -> list[dict[str, Any]]:
    """`Module` projections; items_count counts the items the caller sees."""
    shown = "" if staff else "AND published = 1 "
    counts = count_by(session, "SELECT module_id, count(*) FROM canvas_module_item WHERE module_id "
                               f"IN ({{marks}}) {shown}GROUP BY module_id", [m.id for m in modules])
    return [{"id": m.id, "course_id": m.course_id, "name": m.name, "position": m.position,
             "unlock_at": m.unlock_at, "require_sequential_progress": bool(m.require_sequential_progress),
             "prerequisite_module_ids": ids_of(m.prerequisite_module_ids),
             "published": bool(m.published), "items_count": counts[m.id]} for m in modules]


def item_views(session: Session, items: list[Item], course_id: int,
               user_id: int) -> list[dict[str, Any]]:
    """`Item` projections; `completed` is the user's own progress."""
    done = {r[0] for r in sql.run(session, "SELECT item_id FROM canvas_module_progress WHERE "
                                           f"user_id = ? AND item_id IN ({sql.marks(len(items))})",
                                  (user_id, *[i.id for i in items]))}
    return [{"id": i.id, "module_id": i.module_id, "title": i.title, "type": i.type,
             "content_id": i.content_id,
             "html_url": i.html_url or f"/courses/{course_id}/modules/items/{i.id}", "url": i.url,
             "position": i.position, "indent": i.indent, "published": bool(i.published),
             "completed": i.id in done} for i in items]
