"""Workspace confinement and deterministic file writes."""

from __future__ import annotations

import io
import os
import zipfile
from datetime import datetime
from pathlib import Path, PurePosixPath

from openpyxl import Workbook
from openpyxl.writer.excel import ExcelWriter

from loca.core.world import World, write_bytes_atomic
from mock_servers.core.errors import denied, invalid

DISPLAY_ROOT = "/workspace"
_CONTENT_TYPES = {
    ".aac": "audio/aac", ".bmp": "image/bmp", ".csv": "text/csv", ".doc": "application/msword",
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".flac": "audio/flac", ".gif": "image/gif", ".gz": "application/gzip", ".htm": "text/html",
    ".html": "text/html", ".ico": "image/x-icon", ".ics": "text/calendar", ".jpeg": "image/jpeg",
    ".jpg": "image/jpeg", ".json": "application/json", ".m4a": "audio/mp4",
    ".md": "text/markdown", ".mp3": "audio/mpeg", ".ogg": "audio/ogg",
    ".pdf": "application/pdf", ".png": "image/png",
    ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    ".svg": "image/svg+xml", ".tar": "application/x-tar", ".tif": "image/tiff",
    ".tiff": "image/tiff", ".txt": "text/plain", ".wav": "audio/wav", ".weba": "audio/webm",
    ".webp": "image/webp", ".xls": "application/vnd.ms-excel",
    ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    ".xml": "application/xml", ".zip": "application/zip",
}


def resolve(world: World, path: str) -> Path:
    """Resolve an agent-given path inside the workspace (relative to its root, or absolute under
    the displayed root `/workspace`). Symlinks are followed while they stay inside: a path that
    ends outside, or passes through a symlink leading outside, is PERMISSION_DENIED; a symlink
    loop is INVALID_ARGUMENT."""
    if not isinstance(path, str) or not path.strip():
        raise invalid("path must be a non-empty string")
    if "\x00" in path:
        raise invalid("path contains a NUL byte")
    root = world.workspace.resolve()
    raw = path.strip()
    if raw == DISPLAY_ROOT or raw.startswith(DISPLAY_ROOT + "/"):
        raw = raw[len(DISPLAY_ROOT):].lstrip("/") or "."
    elif os.path.isabs(raw):
        lexical = Path(os.path.normpath(raw))
        if lexical != root and root not in lexical.parents:
            lexical = _followed(Path(raw), path)
            _check_inside(root, lexical, path)
        raw = str(lexical.relative_to(root)) if lexical != root else "."
    joined = root / raw
    target = _followed(joined, path)
    _check_inside(root, target, path)
    if target != Path(os.path.normpath(joined)):  # a symlink on the way: each must stay inside
        parts = joined.relative_to(root).parts
        for depth in range(1, len(parts)):
            _check_inside(root, _followed(root.joinpath(*parts[:depth]), path), path)
    try:
        special = target.exists() and not (target.is_file() or target.is_dir())
    except OSError as exc:  # e.g. a name longer than the file system allows
        raise invalid(f"path '{_short(path)}' cannot be used: {exc.strerror}") from None
    if special:
        raise denied(f"path '{_short(path)}' is not a regular file or directory")
    return target


def _followed(candidate: Path, path: str) -> Path:
    """`candidate` with every symlink followed; loops and unusable names are INVALID_ARGUMENT."""
    try:
        return candidate.resolve()
    except RuntimeError:  # Python 3.11 reports a symlink loop so
        raise invalid(f"path '{_short(path)}' runs into a symlink loop") from None
    except OSError as exc:
        raise invalid(f"path '{_short(path)}' cannot be used: {exc.strerror}") from None


def _check_inside(root: Path, target: Path, path: str) -> None:
    if target != root and root not in target.parents:
        raise denied(f"path '{_short(path)}' is outside the workspace {DISPLAY_ROOT}")


def _short(path: str) -> str:
    return path if len(path) <= 80 else path[:77] + "..."


def display(world: World, target: Path) -> str:
    """How a workspace path is shown to the agent: under `/workspace`, never a host path."""
    rel = target.resolve().relative_to(world.workspace.resolve()).as_posix()
    return DISPLAY_ROOT if rel == "." else f"{DISPLAY_ROOT}/{rel}"


def content_type(filename: str) -> str:
    """A MIME type from the file extension, from a fixed table (the same on every machine, unlike
    the `mimetypes` module); application/octet-stream when unknown."""
    return _CONTENT_TYPES.get(PurePosixPath(filename.lower()).suffix, "application/octet-stream")


_ZIP_EPOCH = (1980, 1, 1, 0, 0, 0)


def workbook_bytes(wb: Workbook, moment: datetime) -> bytes:
    """Serialise a workbook byte-for-byte reproducibly: document times from the virtual clock,
    zip entry times fixed."""
    offset = moment.utcoffset()
    naive_utc = (moment if offset is None else moment - offset).replace(tzinfo=None)
    wb.properties.created = naive_utc
    wb.properties.modified = naive_utc
    wb.properties.lastModifiedBy = None
    raw = io.BytesIO()
    with zipfile.ZipFile(raw, "w", zipfile.ZIP_DEFLATED) as archive:
        ExcelWriter(wb, archive).save()  # wb.save() would stamp `modified` with the wall clock
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(raw.getvalue())) as src, \
            zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            fixed = zipfile.ZipInfo(info.filename, date_time=_ZIP_EPOCH)
            fixed.compress_type = zipfile.ZIP_DEFLATED
            fixed.external_attr = 0o644 << 16
            dst.writestr(fixed, src.read(info.filename))
    return out.getvalue()


def save_workbook(wb: Workbook, path: Path, moment: datetime) -> None:
    write_bytes_atomic(path, workbook_bytes(wb, moment))
