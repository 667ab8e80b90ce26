"""Cloud Logging tools (9): write entries (a message that is a JSON object becomes jsonPayload),
read them newest first through the filter language of `logfilter`, logs, log buckets and sinks."""

from __future__ import annotations

import json
import re
from typing import Annotated, Any, Literal

from pydantic import Field

from mock_servers.core import sql
from mock_servers.core.errors import Code, ToolFailure, invalid, not_found
from mock_servers.core.times import instant
from mock_servers.core.toolkit import Call
from mock_servers.google_cloud import base, logfilter
from mock_servers.google_cloud.base import toolbox
from mock_servers.google_cloud.logfilter import SEVERITIES, stamp

LogName = Annotated[str, Field(min_length=1, max_length=600,
                               description="Log name: short (app) or projects/<project>/logs/<name>")]
Filter = Annotated[str, Field(max_length=logfilter.MAX_FILTER, description=(
    'Filter, e.g. logName="app" AND severity>=WARNING AND textPayload:"timeout"; also timestamp>="2025-01-'
    '15T00:00:00Z", jsonPayload.user="ann", OR, NOT, parentheses'))]
Severity = Literal["DEFAULT", "DEBUG", "INFO", "NOTICE", "WARNING", "ERROR", "CRITICAL", "ALERT", "EMERGENCY"]
_ID = re.compile(r"[A-Za-z0-9_\-]{1,100}")
_DESTINATION = re.compile(r"storage\.googleapis\.com/[a-z0-9][a-z0-9_.\-]{1,220}[a-z0-9]"
                          r"|bigquery\.googleapis\.com/projects/[a-z0-9\-]+/datasets/[A-Za-z0-9_]+"
                          r"|logging\.googleapis\.com/projects/[a-z0-9\-]+/locations/[a-z0-9\-]+/buckets/[A-Za-z0-9_\-]+"
                          r"|pubsub\.googleapis\.com/projects/[a-z0-9\-]+/topics/[A-Za-z0-9_.\-~+%]+")


def full_name(call: Call, short: str) -> str:
    return f"projects/{base.project(call)}/logs/{short}"


def add_entry(call: Call, log_name: str, severity: str, message: str) -> dict[str, Any]:
    short = logfilter.short_log_name(log_name, base.project(call))
    text: str | None = message
    payload: str | None = None
    if message.lstrip().startswith("{"):
        try:
            parsed = json.loads(message)
        except ValueError:
            parsed = None
        if isinstance(parsed, dict):
            text, payload = None, json.dumps(parsed, ensure_ascii=False, separators=(",", ":"))
    when = stamp(call.now)
    cur = sql.run(call.session, "INSERT INTO log_entry (insert_id, log_name, severity, rank, timestamp, text_payload, "
                  "json_payload) VALUES ('', ?, ?, ?, ?, ?, ?)", (short, severity, SEVERITIES[severity], when, text,
                                                                  payload))
    insert_id = base.name_id(call, "log-entry", int(cur.lastrowid or 0))
    sql.run(call.session, "UPDATE log_entry SET insert_id = ? WHERE id = ?", (insert_id, cur.lastrowid))
    return {"insert_id": insert_id, "log_name": full_name(call, short), "timestamp": when, "severity": severity}


@toolbox.tool(rw="write", core=True, idempotent=False)
def logging_write_log(call: Call, log_name: LogName,
                      message: Annotated[str, Field(min_length=1, max_length=256_000, description=(
                          "The message; a JSON object is stored as jsonPayload, anything else as textPayload"))],
                      severity: Annotated[Severity, Field(description="Severity")] = "INFO") -> dict[str, Any]:
    """Write a log entry at the current time. Returns {insert_id,log_name,timestamp,severity}."""
    return add_entry(call, log_name, severity, message)


def _entry(call: Call, row: tuple[Any, ...]) -> dict[str, Any]:
    return {"insert_id": row[2], "log_name": full_name(call, row[3]), "timestamp": row[1], "severity": row[4],
            "text_payload": row[5], "json_payload": json.loads(row[6]) if row[6] is not None else None}


@toolbox.tool(rw="read", core=True, narrow_hint="narrow the filter or lower max_entries")
def logging_read_logs(
        call: Call, log_filter: Filter = "",
        max_entries: Annotated[int, Field(ge=1, le=1000, description="Entries per page (default 50, max 1000)")] = 50,
        page_token: base.PageToken = None) -> dict[str, Any]:
    """Read log entries matching a filter, newest first, 50 per page by default (max 1000); continue
    with next_page_token. Messages are never shortened. Returns {entries:[{insert_id,log_name,
    timestamp,severity,text_payload,json_payload}],next_page_token}. Unsupported filter syntax
    is INVALID_ARGUMENT."""
    compiled = logfilter.compile_filter(log_filter, base.project(call))
    listing = ["entries", log_filter, max_entries]
    after = base.read_token(call, page_token, listing)
    where, params = compiled.where, list(compiled.params)
    if after is not None:
        if not (isinstance(after, list) and len(after) == 2):
            raise invalid("page_token is not a token this service issued")
        where = f"({where}) AND (timestamp < ? OR (timestamp = ? AND id < ?))"
        params += [after[0], after[0], after[1]]
    found = sql.run(call.session, "SELECT id, timestamp, insert_id, log_name, severity, text_payload, json_payload "
                    f"FROM log_entry WHERE {where} ORDER BY timestamp DESC, id DESC LIMIT ?",
                    (*params, max_entries + 1)).fetchall()
    rows = found[:max_entries]
    return base.page(call, "entries", [_entry(call, tuple(r)) for r in rows], [[r[1], r[0]] for r in rows], listing,
                     len(found) > max_entries)


@toolbox.tool(rw="read", core=True)
def logging_list_logs(call: Call) -> dict[str, Any]:
    """List the logs that have entries, by name. Returns {logs:[{name,entry_count}]}."""
    found = sql.run(call.session, "SELECT log_name, COUNT(*) FROM log_entry GROUP BY log_name ORDER BY log_name")
    return {"logs": [{"name": full_name(call, n), "entry_count": c} for n, c in found.fetchall()]}


@toolbox.tool(rw="write", destructive=True)
def logging_delete_log(call: Call, log_name: LogName) -> dict[str, Any]:
    """Delete a log: all its entries. Returns {deleted:log_name,entries:n}; a log without entries
    is NOT_FOUND."""
    short = logfilter.short_log_name(log_name, base.project(call))
    count = sql.run(call.session, "DELETE FROM log_entry WHERE log_name = ?", (short,)).rowcount
    if not count:
        raise not_found(f"log '{log_name}' has no entries", hint="see logging_list_logs")
    return {"deleted": full_name(call, short), "entries": count}


def _check_id(value: str, what: str) -> str:
    if not _ID.fullmatch(value):
        raise invalid(f"{what} '{value[:100]}' may use letters, digits, '_' and '-' (1-100)")
    return value


def _exists(call: Call, table: str, column: str, value: str, what: str) -> None:
    if sql.scalar(call.session, f"SELECT 1 FROM {table} WHERE {column} = ?", (value,)):
        raise ToolFailure(Code.ALREADY_EXISTS, f"{what} '{value}' already exists")


@toolbox.tool(rw="write", idempotent=False)
def logging_create_log_bucket(
        call: Call, bucket_id: Annotated[str, Field(min_length=1, max_length=100, description="Bucket id")],
        location: Annotated[str, Field(min_length=1, max_length=64, description="Location, e.g. global")] = "global",
        retention_days: Annotated[int, Field(ge=1, le=3650, description="Days entries are kept")] = 30,
) -> dict[str, Any]:
    """Create a log bucket (its retention is stored and reported). Returns {bucket_id,location,
    retention_days,created}; an existing id is ALREADY_EXISTS."""
    _exists(call, "log_bucket", "bucket_id", _check_id(bucket_id, "bucket id"), "log bucket")
    created = instant(call.now)
    sql.run(call.session, "INSERT INTO log_bucket (bucket_id, location, retention_days, created) VALUES (?, ?, ?, ?)",
            (bucket_id, location, retention_days, created))
    return {"bucket_id": bucket_id, "location": location, "retention_days": retention_days, "created": created}


@toolbox.tool(rw="read")
def logging_list_log_buckets(call: Call) -> dict[str, Any]:
    """List the log buckets by id. Returns {buckets:[{bucket_id,location,retention_days,created}]}."""
    found = sql.run(call.session, "SELECT bucket_id, location, retention_days, created FROM log_bucket "
                    "ORDER BY bucket_id").fetchall()
    return {"buckets": [{"bucket_id": b, "location": loc, "retention_days": r, "created": c} for b, loc, r, c in found]}


@toolbox.tool(rw="write", idempotent=False)
def logging_create_log_sink(
        call: Call, sink_name: Annotated[str, Field(min_length=1, max_length=100, description="Sink name")],
        destination: Annotated[str, Field(min_length=1, max_length=500, description=(
            "storage.googleapis.com/BUCKET, bigquery.googleapis.com/projects/P/datasets/D, "
            "logging.googleapis.com/projects/P/locations/L/buckets/B or pubsub.googleapis.com/projects/P/topics/T"))],
        log_filter: Filter = "") -> dict[str, Any]:
    """Create a sink routing matching entries to a destination (recorded; nothing is exported). The
    filter is checked like logging_read_logs'. Returns {sink_name,destination,log_filter,created}."""
    _exists(call, "log_sink", "sink_name", _check_id(sink_name, "sink name"), "sink")
    if not _DESTINATION.fullmatch(destination):
        raise invalid(f"destination '{destination[:200]}' is not a storage, bigquery, logging or pubsub destination")
    logfilter.compile_filter(log_filter, base.project(call))
    created = instant(call.now)
    sql.run(call.session, "INSERT INTO log_sink (sink_name, destination, log_filter, created) VALUES (?, ?, ?, ?)",
            (sink_name, destination, log_filter, created))
    return {"sink_name": sink_name, "destination": destination, "log_filter": log_filter, "created": created}


@toolbox.tool(rw="read")
def logging_list_log_sinks(call: Call) -> dict[str, Any]:
    """List the sinks by name. Returns {sinks:[{sink_name,destination,log_filter,created}]}."""
    found = sql.run(call.session, "SELECT sink_name, destination, log_filter, created FROM log_sink "
                    "ORDER BY sink_name").fetchall()
    return {"sinks": [{"sink_name": n, "destination": d, "log_filter": f, "created": c} for n, d, f, c in found]}


@toolbox.tool(rw="write", destructive=True)
def logging_delete_log_sink(call: Call, sink_name: Annotated[str, Field(min_length=1, max_length=100,
                                                                         description="Sink name")]) -> dict[str, Any]:
    """Delete a sink. Returns {deleted:sink_name}; an unknown sink is NOT_FOUND."""
    if not sql.run(call.session, "DELETE FROM log_sink WHERE sink_name = ?", (sink_name,)).rowcount:
        raise not_found(f"sink '{sink_name}' does not exist", hint="see logging_list_log_sinks")
    return {"deleted": sink_name}
