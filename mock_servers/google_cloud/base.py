"""What every google_cloud area shares: the toolbox, the world's project, deterministic ids
and page tokens."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from typing import Annotated, Any

from pydantic import Field

from loca.core.rng import derive_seed
from mock_servers.core.errors import invalid
from mock_servers.core.output import dump_json, items_that_fit
from mock_servers.core.toolkit import Call, Toolbox

DEFAULT_PROJECT = "local-project"
LIST_KEYS = ("rows", "datasets", "tables", "jobs", "buckets", "objects", "entries", "logs", "sinks",
             "instances", "zones")

toolbox = Toolbox(
    "google_cloud", table_prefix=("bq_", "gcs_", "log_", "gce_"), list_keys=LIST_KEYS,
    snapshot_ignore={"bq_job": None},  # every query records a job, a read included
    instructions="Google Cloud in one project: BigQuery (GoogleSQL; tables as dataset.table or "
    "`project.dataset.table`), Cloud Storage buckets and objects, Cloud Logging and Compute Engine "
    "instances. Files are read from and written to the workspace.")

CAP_NOTICE = "output cap reached after {} items; request the next page with next_page_token"
PageToken = Annotated[str | None, Field(max_length=2000, description="next_page_token of the previous call")]


def project(call: Call) -> str:
    """The world's project id (`accounts.google_cloud.project`, else `local-project`)."""
    account = call.world.meta.accounts.get("google_cloud") or {}
    return str(account.get("project") or DEFAULT_PROJECT)


def name_id(call: Call, kind: str, number: int) -> str:
    """A string id that follows from the world's seed and a counter."""
    meta = call.world.meta
    return f"{derive_seed(meta.task, meta.seed, kind, number):016x}"


def _key(call: Call) -> bytes:
    meta = call.world.meta
    return derive_seed(meta.task, meta.seed, "google-cloud-page-token").to_bytes(8, "big")


def issue_token(call: Call, listing: Any, after: Any) -> str:
    """A token continuing `listing` (its arguments) after the key `after`."""
    body = json.dumps([listing, after], separators=(",", ":"))
    signature = hmac.new(_key(call), body.encode(), hashlib.sha256).hexdigest()[:24]
    return base64.urlsafe_b64encode(f"{body}|{signature}".encode()).decode().rstrip("=")


def page(call: Call, key: str, items: list[Any], keys: list[Any], listing: Any, more: bool,
         **rest: Any) -> dict[str, Any]:
    """The envelope `{key: items, **rest, next_page_token}` of one page, whose items have the
    continuation keys `keys`; cut at an item under the output cap, with a token continuing right
    after the last item shown and a notice."""
    def render(count: int, notice: bool) -> dict[str, Any]:
        token = issue_token(call, listing, keys[count - 1]) if count and (more or count < len(items)) else None
        out = {key: items[:count], **rest, "next_page_token": token}
        return {**out, "notice": CAP_NOTICE.format(count)} if notice else out
    whole = render(len(items), False)
    if len(dump_json(whole)) <= call.max_output_chars:
        return whole
    return render(items_that_fit(len(items), lambda k: render(k, True), call.max_output_chars), True)


def read_token(call: Call, token: str | None, listing: Any) -> Any:
    """The key a token continues after (None without a token); a forged token or one of another
    listing is INVALID_ARGUMENT."""
    if not token:
        return None
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)).decode()
        body, signature = raw.rsplit("|", 1)
        valid = hmac.compare_digest(signature, hmac.new(_key(call), body.encode(), hashlib.sha256).hexdigest()[:24])
        found, after = json.loads(body)
    except (ValueError, TypeError, binascii.Error, UnicodeDecodeError):
        valid, found, after = False, None, None
    if not valid:
        raise invalid("page_token is not a token this service issued", hint="use next_page_token as returned")
    if found != json.loads(json.dumps(listing)):
        raise invalid("page_token belongs to a listing with other arguments",
                      hint="repeat the same arguments, or start without page_token")
    return after
