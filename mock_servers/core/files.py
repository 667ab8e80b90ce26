"""Workspace confinement and deterministic file writes."""

from __future__ import annotations

import io
import os
import zipfile
from datetime import datetime
from pathlib import Path

from openpyxl import Workbook
from openpyxl.writer.excel import ExcelWriter

from loca.core.world import World, write_bytes_atomic
from mock_servers.core.errors import denied, invalid

DISPLAY_ROOT = "/workspace"


def resolve(world: World, path: str) -> Path:
    """Resolve an agent-given path inside the workspace (relative to its root, or absolute under
    the displayed root `/workspace`). Symlinks are followed; escapes are PERMISSION_DENIED."""
    if not isinstance(path, str) or not path.strip():
        raise invalid("path must be a non-empty string")
    if "\x00" in path:
        raise invalid("path contains a NUL byte")
    root = world.workspace.resolve()
    raw = path.strip()
    if raw == DISPLAY_ROOT or raw.startswith(DISPLAY_ROOT + "/"):
        raw = raw[len(DISPLAY_ROOT):].lstrip("/") or "."
    elif os.path.isabs(raw):
        candidate = Path(raw).resolve()
        if candidate != root and root not in candidate.parents:
            raise denied(f"path '{path}' is outside the workspace {DISPLAY_ROOT}")
        raw = str(candidate.relative_to(root)) if candidate != root else "."
    target = (root / raw).resolve()
    if target != root and root not in target.parents:
        raise denied(f"path '{path}' is outside the workspace {DISPLAY_ROOT}")
    try:
        special = target.exists() and not (target.is_file() or target.is_dir())
    except OSError as exc:  # e.g. a name longer than the file system allows
        raise invalid(f"path '{_short(path)}' cannot be used: {exc.strerror}") from None
    if special:
        raise denied(f"path '{_short(path)}' is not a regular file or directory")
    return target


def _short(path: str) -> str:
    return path if len(path) <= 80 else path[:77] + "..."


def display(world: World, target: Path) -> str:
    """How a workspace path is shown to the agent: under `/workspace`, never a host path."""
    rel = target.resolve().relative_to(world.workspace.resolve()).as_posix()
    return DISPLAY_ROOT if rel == "." else f"{DISPLAY_ROOT}/{rel}"


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
