"""Cloud Storage tools (13): buckets (naming rules, versioning and lifecycle settings stored and
reported), objects with their bytes, uploads from and downloads to the workspace, copies and
moves in one transaction, and deterministic signed URLs."""

from __future__ import annotations

import hashlib
import hmac
import json
from datetime import timedelta
from typing import Annotated, Any, Literal
from urllib.parse import quote

from pydantic import Field

from loca.core.rng import derive_seed
from loca.core.world import write_bytes_atomic
from mock_servers.core import files, sql
from mock_servers.core.errors import Code, ToolFailure, invalid, not_found
from mock_servers.core.times import instant
from mock_servers.core.toolkit import Call
from mock_servers.google_cloud import base, gcs
from mock_servers.google_cloud.base import toolbox

Bucket = Annotated[str, Field(min_length=1, max_length=222, description="Bucket name")]
Blob = Annotated[str, Field(min_length=1, max_length=1024, description="Object name (path inside the bucket)")]
WorkspacePath = Annotated[str, Field(min_length=1, max_length=4096, description="File path in the workspace")]
LOCATION = r"(?i)^(US|EU|ASIA|NAM4|EUR4|EUR5|EUR7|EUR8|ASIA1|[a-z]+-[a-z]+[0-9]+)$"
"""The forms of a Cloud Storage location; anything else is refused, as the service refuses it."""
MaxResults = Annotated[int, Field(ge=1, le=1000, description="Items per page (default 100, max 1000)")]


@toolbox.tool(rw="read", core=True)
def storage_list_buckets(call: Call, max_results: MaxResults = 100,
                         page_token: base.PageToken = None) -> dict[str, Any]:
    """List the project's buckets by name, 100 per page by default (max 1000). Returns
    {buckets:[{name,location,storage_class,versioning_enabled,created}],total,next_page_token}."""
    listing = ["buckets", max_results]
    after = base.read_token(call, page_token, listing) or ""
    found = sql.run(call.session, f"SELECT name, {gcs.BUCKET_COLUMNS} FROM gcs_bucket WHERE name > ? ORDER BY name "
                    "LIMIT ?", (after, max_results + 1)).fetchall()
    rows = found[:max_results]
    total = sql.scalar(call.session, "SELECT COUNT(*) FROM gcs_bucket")
    return base.page(call, "buckets", [gcs.bucket_view(tuple(r[1:])) for r in rows], [r[0] for r in rows], listing,
                     len(found) > max_results, total=total)


@toolbox.tool(rw="write", core=True, idempotent=False)
def storage_create_bucket(call: Call, bucket_name: Bucket, location: Annotated[str, Field(
        min_length=1, max_length=64, pattern=LOCATION, description=(
            "Location: a multi-region (US, EU, ASIA), a dual-region (NAM4, EUR4, EUR5, EUR7, EUR8, "
            "ASIA1) or a region such as us-central1 or europe-north1"))] = "US") -> dict[str, Any]:
    """Create a bucket. Names follow GCS rules (3-63 lower-case letters, digits, -, _ and .; no
    'goog' prefix); names are global, so an existing one is ALREADY_EXISTS. Returns the bucket
    {name,location,storage_class,versioning_enabled,created}."""
    return gcs.bucket_view(gcs.create_bucket(call.session, bucket_name, location, call.now))


@toolbox.tool(rw="read", core=True)
def storage_list_objects(
        call: Call, bucket_name: Bucket,
        prefix: Annotated[str, Field(max_length=1024, description="Only names starting with this")] = "",
        max_results: MaxResults = 100, page_token: base.PageToken = None) -> dict[str, Any]:
    """List a bucket's objects by name, 100 per page by default (max 1000); continue with
    next_page_token. Returns {objects:[{name,size,content_type,updated,md5}],total,next_page_token}."""
    bucket_id = gcs.bucket_row(call.session, bucket_name)[0]
    listing = ["objects", bucket_name, prefix, max_results]
    after = base.read_token(call, page_token, listing) or ""
    where = "bucket_id = ? AND name >= ? AND name < ?"  # the names starting with prefix, a range of the index
    params = (bucket_id, prefix, prefix + "\U0010ffff")
    found = sql.run(call.session, f"SELECT {gcs.OBJECT_COLUMNS} FROM gcs_object WHERE {where} AND name > ? "
                    "ORDER BY name LIMIT ?", (*params, after, max_results + 1)).fetchall()
    rows = found[:max_results]
    total = sql.scalar(call.session, f"SELECT COUNT(*) FROM gcs_object WHERE {where}", params)
    return base.page(call, "objects", [gcs.object_view(tuple(r)) for r in rows], [r[0] for r in rows], listing,
                     len(found) > max_results, total=total)


@toolbox.tool(rw="write", core=True, destructive=True, idempotent=False)
def storage_upload_file(call: Call, bucket_name: Bucket, source_file_path: WorkspacePath,
                        destination_blob_name: Blob) -> dict[str, Any]:
    """Upload a workspace file as an object (an existing object is replaced; limit 100 MB).
    Returns {bucket,name,size,content_type,md5,generation}."""
    path = files.resolve(call.world, source_file_path)
    if not path.is_file():
        raise not_found(f"file '{source_file_path}' does not exist in the workspace")
    if path.stat().st_size > gcs.MAX_OBJECT_BYTES:
        raise ToolFailure(Code.RESOURCE_EXHAUSTED, f"file '{source_file_path}' is over the 100 MB limit")
    return gcs.put_object(call.session, bucket_name, destination_blob_name, path.read_bytes(),
                          gcs.content_type_of(destination_blob_name), call.now)


@toolbox.tool(rw="write", destructive=True)
def storage_download_file(call: Call, bucket_name: Bucket, source_blob_name: Blob,
                          destination_file_path: WorkspacePath) -> dict[str, Any]:
    """Download an object to a workspace file (parent folders are created; an existing file is
    replaced). Returns {path,size}."""
    data, _ = gcs.read_object(call.session, bucket_name, source_blob_name)
    target = files.resolve(call.world, destination_file_path)
    if target.is_dir():
        raise invalid(f"'{destination_file_path}' is a folder; give a file path")
    target.parent.mkdir(parents=True, exist_ok=True)
    write_bytes_atomic(target, data)
    return {"path": files.display(call.world, target), "size": len(data)}


@toolbox.tool(rw="write", destructive=True)
def storage_delete_object(call: Call, bucket_name: Bucket, blob_name: Blob) -> dict[str, Any]:
    """Delete an object. Returns {deleted:true,bucket,name}; a missing object is NOT_FOUND."""
    gcs.delete_object(call.session, bucket_name, blob_name)
    return {"deleted": True, "bucket": bucket_name, "name": blob_name}


def _size(call: Call, row: tuple[Any, ...]) -> dict[str, Any]:
    count, total = gcs.bucket_size(call.session, row[0])
    return {"object_count": count, "total_bytes": total}


@toolbox.tool(rw="read")
def storage_get_bucket_info(call: Call, bucket_name: Bucket) -> dict[str, Any]:
    """Describe a bucket. Returns {name,location,storage_class,versioning_enabled,created,
    object_count,total_bytes,lifecycle_rules:[{action,age_days}]}."""
    row = gcs.bucket_row(call.session, bucket_name)
    return {**gcs.bucket_view(row), **_size(call, row), "lifecycle_rules": gcs.lifecycle(row)}


@toolbox.tool(rw="read")
def storage_get_bucket_size(call: Call, bucket_name: Bucket) -> dict[str, Any]:
    """Count a bucket's objects and bytes. Returns {bucket,object_count,total_bytes}."""
    return {"bucket": bucket_name, **_size(call, gcs.bucket_row(call.session, bucket_name))}


@toolbox.tool(rw="read")
def storage_generate_signed_url(
        call: Call, bucket_name: Bucket, blob_name: Blob,
        expiration_minutes: Annotated[int, Field(ge=1, le=10080, description="Validity in minutes (max 7 days)")] = 60,
        method: Annotated[Literal["GET", "PUT", "DELETE"], Field(description="HTTP method the URL allows")] = "GET",
) -> dict[str, Any]:
    """Make a V4-style signed URL for an object (simulated: deterministic, signed with a key of
    this world, and not served). GET and DELETE need an existing object. Returns {url,expires_at,
    simulated:true}."""
    if method == "PUT":
        gcs.check_object_name(blob_name)
        gcs.bucket_row(call.session, bucket_name)
    else:
        gcs.object_row(call.session, bucket_name, blob_name)
    meta = call.world.meta
    stamp = call.now.strftime("%Y%m%dT%H%M%SZ")
    query = (f"X-Goog-Algorithm=GOOG4-HMAC-SHA256&X-Goog-Date={stamp}&X-Goog-Expires={expiration_minutes * 60}"
             "&X-Goog-SignedHeaders=host")
    key = derive_seed(meta.task, meta.seed, "gcs-signed-url").to_bytes(8, "big")
    path = f"/{bucket_name}/{quote(blob_name, safe='/')}"
    signature = hmac.new(key, f"{method}\n{path}\n{query}".encode(), hashlib.sha256).hexdigest()
    return {"url": f"https://storage.googleapis.com{path}?{query}&X-Goog-Signature={signature}",
            "expires_at": instant(call.now + timedelta(minutes=expiration_minutes)), "simulated": True}


def _copy(call: Call, source_bucket: str, source_blob: str, dest_bucket: str, dest_blob: str) -> dict[str, Any]:
    data, kind = gcs.read_object(call.session, source_bucket, source_blob)
    return gcs.put_object(call.session, dest_bucket, dest_blob, data, kind, call.now)


@toolbox.tool(rw="write", idempotent=False)
def storage_copy_object(call: Call, source_bucket: Bucket, source_blob: Blob, dest_bucket: Bucket,
                        dest_blob: Blob) -> dict[str, Any]:
    """Copy an object (to another bucket or name; an existing destination is replaced). Returns the
    destination {bucket,name,size,content_type,md5,generation}."""
    return _copy(call, source_bucket, source_blob, dest_bucket, dest_blob)


@toolbox.tool(rw="write", destructive=True, idempotent=False)
def storage_move_object(call: Call, source_bucket: Bucket, source_blob: Blob, dest_bucket: Bucket,
                        dest_blob: Blob) -> dict[str, Any]:
    """Move (rename) an object: copy and delete in one transaction, so a failed copy deletes
    nothing. Returns the destination {bucket,name,size,content_type,md5,generation}."""
    if (source_bucket, source_blob) == (dest_bucket, dest_blob):
        raise invalid("source and destination are the same object")
    moved = _copy(call, source_bucket, source_blob, dest_bucket, dest_blob)
    gcs.delete_object(call.session, source_bucket, source_blob)
    return moved


@toolbox.tool(rw="write")
def storage_enable_versioning(call: Call, bucket_name: Bucket, enabled: Annotated[bool, Field(
        description="Turn versioning on (true) or off (false)")] = True) -> dict[str, Any]:
    """Set a bucket's versioning flag. The flag is stored and reported; no generation history is
    kept (an overwrite replaces the object). Returns the bucket."""
    row = gcs.bucket_row(call.session, bucket_name)
    sql.run(call.session, "UPDATE gcs_bucket SET versioning_enabled = ? WHERE id = ?", (enabled, row[0]))
    return gcs.bucket_view(gcs.bucket_row(call.session, bucket_name))


@toolbox.tool(rw="write")
def storage_set_bucket_lifecycle(
        call: Call, bucket_name: Bucket,
        age_days: Annotated[int, Field(ge=1, le=3650, description="Age in days the rule applies at")] = 30,
        action: Annotated[Literal["Delete", "SetStorageClass"], Field(description="What the rule does")] = "Delete",
) -> dict[str, Any]:
    """Set a bucket's lifecycle rule (replacing any earlier one). The rule is stored and reported,
    not executed: no object is deleted or changed by it. Returns the bucket with lifecycle_rules."""
    row = gcs.bucket_row(call.session, bucket_name)
    rules = [{"action": action, "age_days": age_days}]
    sql.run(call.session, "UPDATE gcs_bucket SET lifecycle_json = ? WHERE id = ?", (json.dumps(rules), row[0]))
    return {**gcs.bucket_view(row), "lifecycle_rules": rules}
