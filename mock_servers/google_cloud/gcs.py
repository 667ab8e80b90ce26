"""Cloud Storage's rules over `gcs_*` tables: bucket naming, objects with their bytes, MD5 and
generation, and the projections the tools show."""

from __future__ import annotations

import base64
import hashlib
import json
import mimetypes
import re
from datetime import datetime
from typing import Any

from sqlmodel import Session

from mock_servers.core import sql
from mock_servers.core.errors import Code, ToolFailure, invalid, not_found
from mock_servers.core.times import instant

MAX_OBJECT_BYTES = 100 * 1024 * 1024
_BUCKET = re.compile(r"[a-z0-9][a-z0-9_.-]{1,220}[a-z0-9]")
_IP = re.compile(r"\d{1,3}(\.\d{1,3}){3}")
BUCKET_COLUMNS = "id, name, location, storage_class, versioning_enabled, lifecycle_json, created"
OBJECT_COLUMNS = "name, size, content_type, updated, md5, generation"


def check_bucket_name(name: str) -> str:
    """GCS bucket naming: 3-63 characters (222 with dots, 63 per dot-separated part), lower-case
    letters, digits, `-`, `_` and `.`, starting and ending with a letter or digit, no IP
    address form, no `goog` prefix and no `google` in it."""
    problem = None
    if not _BUCKET.fullmatch(name):
        problem = "use 3-63 lower-case letters, digits, '-', '_' or '.', starting and ending with a letter or digit"
    elif ("." not in name and len(name) > 63) or any(len(part) > 63 for part in name.split(".")):
        problem = "at most 63 characters (222 with dots, 63 between dots)"
    elif ".." in name or _IP.fullmatch(name):
        problem = "no '..' and no IP address form"
    elif name.startswith("goog") or "google" in name or "g00gle" in name:
        problem = "names may not start with 'goog' or contain 'google'"
    if problem:
        raise invalid(f"Invalid bucket name '{name[:100]}': {problem}")
    return name


def check_object_name(name: str) -> str:
    if not name or len(name.encode()) > 1024 or any(c in name for c in "\r\n") or name in (".", ".."):
        raise invalid(f"Invalid object name '{name[:100]}': 1-1024 bytes of UTF-8, no newlines, not '.' or '..'")
    return name


def bucket_row(session: Session, name: str) -> tuple[Any, ...]:
    found = sql.run(session, f"SELECT {BUCKET_COLUMNS} FROM gcs_bucket WHERE name = ?", (name,)).fetchone()
    if found is None:
        raise not_found(f"bucket '{name}' does not exist", hint="see storage_list_buckets")
    return tuple(found)


def bucket_view(row: tuple[Any, ...]) -> dict[str, Any]:
    return {"name": row[1], "location": row[2], "storage_class": row[3], "versioning_enabled": bool(row[4]),
            "created": row[6]}


def create_bucket(session: Session, name: str, location: str, created: datetime) -> tuple[Any, ...]:
    check_bucket_name(name)
    if sql.scalar(session, "SELECT 1 FROM gcs_bucket WHERE name = ?", (name,)):
        raise ToolFailure(Code.ALREADY_EXISTS, f"bucket '{name}' already exists (bucket names are global)")
    sql.run(session, "INSERT INTO gcs_bucket (name, location, storage_class, versioning_enabled, lifecycle_json, "
            "created) VALUES (?, ?, 'STANDARD', 0, '[]', ?)", (name, location.upper(), instant(created)))
    return bucket_row(session, name)


def object_view(row: tuple[Any, ...]) -> dict[str, Any]:
    return {"name": row[0], "size": row[1], "content_type": row[2], "updated": row[3], "md5": row[4]}


def object_row(session: Session, bucket: str, name: str) -> tuple[Any, ...]:
    bucket_id = bucket_row(session, bucket)[0]
    found = sql.run(session, f"SELECT {OBJECT_COLUMNS} FROM gcs_object WHERE bucket_id = ? AND name = ?",
                    (bucket_id, name)).fetchone()
    if found is None:
        raise not_found(f"object '{name}' does not exist in bucket '{bucket}'",
                        hint="see storage_list_objects")
    return tuple(found)


def content_type_of(name: str) -> str:
    return mimetypes.guess_type(name)[0] or "application/octet-stream"


def put_object(session: Session, bucket: str, name: str, data: bytes, content_type: str,
               when: datetime) -> dict[str, Any]:
    """Write (or overwrite) an object; its metadata with `bucket` and `generation`."""
    check_object_name(name)
    if len(data) > MAX_OBJECT_BYTES:
        raise ToolFailure(Code.RESOURCE_EXHAUSTED, f"object of {len(data)} bytes is over the 100 MB limit")
    bucket_id = bucket_row(session, bucket)[0]
    md5 = base64.b64encode(hashlib.md5(data).digest()).decode()
    generation = int(sql.scalar(session, "SELECT COALESCE(MAX(generation), 0) + 1 FROM gcs_object"))
    sql.run(session, "INSERT INTO gcs_object (bucket_id, name, blob, content_type, size, md5, generation, updated) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT(bucket_id, name) DO UPDATE SET blob = excluded.blob, "
            "content_type = excluded.content_type, size = excluded.size, md5 = excluded.md5, "
            "generation = excluded.generation, updated = excluded.updated",
            (bucket_id, name, data, content_type, len(data), md5, generation, instant(when)))
    return {"bucket": bucket, "name": name, "size": len(data), "content_type": content_type, "md5": md5,
            "generation": generation}


def read_object(session: Session, bucket: str, name: str) -> tuple[bytes, str]:
    """An object's bytes and content type."""
    bucket_id = bucket_row(session, bucket)[0]
    found = sql.run(session, "SELECT blob, content_type FROM gcs_object WHERE bucket_id = ? AND name = ?",
                    (bucket_id, name)).fetchone()
    if found is None:
        raise not_found(f"object '{name}' does not exist in bucket '{bucket}'", hint="see storage_list_objects")
    return bytes(found[0]), found[1]


def delete_object(session: Session, bucket: str, name: str) -> None:
    bucket_id = bucket_row(session, bucket)[0]
    if sql.run(session, "DELETE FROM gcs_object WHERE bucket_id = ? AND name = ?", (bucket_id, name)).rowcount == 0:
        raise not_found(f"object '{name}' does not exist in bucket '{bucket}'", hint="see storage_list_objects")


def bucket_size(session: Session, bucket_id: int) -> tuple[int, int]:
    found = sql.run(session, "SELECT COUNT(*), COALESCE(SUM(size), 0) FROM gcs_object WHERE bucket_id = ?",
                    (bucket_id,)).fetchone()
    return int(found[0]), int(found[1])


def lifecycle(row: tuple[Any, ...]) -> list[dict[str, Any]]:
    rules: list[dict[str, Any]] = json.loads(row[5])
    return rules
