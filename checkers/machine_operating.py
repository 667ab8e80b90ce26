"""Checker of machine_operating: the uploaded object and the workspace CSV, the report against
ground truth, plus no side effects (the table unchanged, no bucket or object but the report's:
the footprint lets only bucket `iot_anomaly_reports` and its object `anomaly_report.csv` appear)."""

from __future__ import annotations

import re
import sqlite3

from checkers.kit import Checks, Context, header, keys, order_as_truth, read_table, values
from checkers.side_effects import no_side_effects
from checkers.verdict import CheckFailed
from envs.machine_operating import BUCKET, OBJECT, REPORT, TASK

STAMP = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}")


def _objects(ctx: Context) -> dict[tuple[str, str], bytes]:
    """Every stored object, by (bucket, name); empty buckets as (bucket, "")."""

    def read() -> dict[tuple[str, str], bytes]:
        conn = sqlite3.connect(f"file:{ctx.world.state_path}?mode=ro", uri=True)
        try:
            found = conn.execute("SELECT b.name, o.name, o.blob FROM gcs_bucket b "
                                 "LEFT JOIN gcs_object o ON o.bucket_id = b.id").fetchall()
        finally:
            conn.close()
        return {(bucket, name or ""): bytes(blob or b"") for bucket, name, blob in found}

    objects: dict[tuple[str, str], bytes] = ctx.memo("objects", read)
    return objects


def uploaded(ctx: Context) -> str:
    """Bucket `iot_anomaly_reports` exists and holds object `anomaly_report.csv`."""
    objects = _objects(ctx)
    if (BUCKET, OBJECT) not in objects:
        there = sorted(name for bucket, name in objects if bucket == BUCKET and name)
        where = f"bucket {BUCKET} holds {there}" if any(b == BUCKET for b, _ in objects) else f"no bucket {BUCKET}"
        raise CheckFailed(f"object {OBJECT} was not uploaded ({where})")
    return f"{BUCKET}/{OBJECT} exists"


def _lines(data: bytes) -> bytes:
    return data.replace(b"\r\n", b"\n").replace(b"\r", b"\n").rstrip(b"\n")


def local_equals_upload(ctx: Context) -> str:
    """The workspace file and the uploaded object hold the same text (newlines normalised)."""
    path = ctx.world.workspace / REPORT.file
    stored = _objects(ctx).get((BUCKET, OBJECT))
    if not path.is_file() or stored is None:
        raise CheckFailed(f"{REPORT.file} is {'not uploaded' if path.is_file() else 'missing from the workspace'}")
    if _lines(path.read_bytes()) != _lines(stored):
        raise CheckFailed(f"the workspace {REPORT.file} differs from the uploaded object")
    return "the workspace file and the uploaded object are the same"


def rows(ctx: Context) -> str:
    """Every timestamp is `YYYY-MM-DD HH:MM:SS`; the (timestamp, machine_id, sensor_type) set
    equals ground truth, one to one."""
    bad = [r["timestamp"] for r in read_table(ctx, REPORT).records(REPORT)
           if not STAMP.fullmatch(str(r["timestamp"] or "").strip())]
    if bad:
        raise CheckFailed(f"timestamps not written as YYYY-MM-DD HH:MM:SS: {bad[:5]}")
    return keys(REPORT)(ctx)


CHECKS = Checks(
    TASK,
    uploaded=uploaded,
    local_equals_upload=local_equals_upload,
    header=header(REPORT),
    rows=rows,
    values=values(REPORT),
    order=order_as_truth(REPORT),
    no_side_effects=no_side_effects(TASK),
)
