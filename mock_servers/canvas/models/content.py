"""Canvas tables of course content: discussions and announcements, files and folders, wiki
pages, modules with their items and each user's progress through them."""

from __future__ import annotations

from sqlalchemy import Column, LargeBinary, UniqueConstraint
from sqlmodel import Field, SQLModel

from mock_servers.canvas.models.coursework import NO_REUSE


class CanvasDiscussionTopic(SQLModel, table=True):
    """Discussion topics and announcements (`is_announcement`)."""

    __tablename__ = "canvas_discussion_topic"
    id: int | None = Field(default=None, primary_key=True)
    course_id: int = Field(foreign_key="canvas_course.id", index=True)
    title: str
    message: str
    posted_at: str
    author_id: int = Field(foreign_key="canvas_user.id")
    is_announcement: bool = False
    published: bool = True


class CanvasDiscussionEntry(SQLModel, table=True):
    __tablename__ = "canvas_discussion_entry"
    id: int | None = Field(default=None, primary_key=True)
    topic_id: int = Field(foreign_key="canvas_discussion_topic.id", index=True)
    user_id: int = Field(foreign_key="canvas_user.id")
    message: str
    created_at: str


class CanvasFolder(SQLModel, table=True):
    """A folder of a course's files; `full_name` is its path from the course's root."""

    __tablename__ = "canvas_folder"
    id: int | None = Field(default=None, primary_key=True)
    course_id: int = Field(foreign_key="canvas_course.id", index=True)
    parent_folder_id: int | None = Field(default=None, foreign_key="canvas_folder.id")
    name: str
    full_name: str


class CanvasFile(SQLModel, table=True):
    """An uploaded file: in a course's files (`course_id`) or a user's own (`user_id`)."""

    __tablename__ = "canvas_file"
    id: int | None = Field(default=None, primary_key=True)
    course_id: int | None = Field(default=None, foreign_key="canvas_course.id", index=True)
    user_id: int | None = Field(default=None, foreign_key="canvas_user.id", index=True)
    folder_id: int | None = Field(default=None, foreign_key="canvas_folder.id")
    display_name: str
    filename: str
    content_type: str
    size: int
    created_at: str
    data: bytes = Field(sa_column=Column(LargeBinary, nullable=False))


class CanvasPage(SQLModel, table=True):
    """A wiki page, addressed by its `url` slug inside the course."""

    __tablename__ = "canvas_page"
    __table_args__ = (UniqueConstraint("course_id", "url"),)
    id: int | None = Field(default=None, primary_key=True)
    course_id: int = Field(foreign_key="canvas_course.id")
    url: str
    title: str
    body: str | None = None
    created_at: str
    updated_at: str
    published: bool = True
    front_page: bool = False


class CanvasModule(SQLModel, table=True):
    """`prerequisite_module_ids` is a comma-separated list of earlier modules' ids."""

    __tablename__ = "canvas_module"
    id: int | None = Field(default=None, primary_key=True)
    course_id: int = Field(foreign_key="canvas_course.id", index=True)
    name: str
    position: int
    unlock_at: str | None = None
    require_sequential_progress: bool = False
    prerequisite_module_ids: str = ""
    published: bool = True


class CanvasModuleItem(SQLModel, table=True):
    """`content_id` points into the table of `type` (Assignment, Quiz, File, Page, Discussion);
    `url` is the target of ExternalUrl and ExternalTool items."""

    __tablename__ = "canvas_module_item"
    __table_args__ = NO_REUSE
    id: int | None = Field(default=None, primary_key=True)
    module_id: int = Field(foreign_key="canvas_module.id", index=True)
    title: str
    type: str
    content_id: int | None = None
    html_url: str | None = None
    url: str | None = None
    position: int
    indent: int = 0
    published: bool = True


class CanvasModuleProgress(SQLModel, table=True):
    """One user's completion of one module item."""

    __tablename__ = "canvas_module_progress"
    __table_args__ = (UniqueConstraint("user_id", "item_id"), NO_REUSE)
    id: int | None = Field(default=None, primary_key=True)
    user_id: int = Field(foreign_key="canvas_user.id")
    item_id: int = Field(foreign_key="canvas_module_item.id", index=True)
    completed_at: str
