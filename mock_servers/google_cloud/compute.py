"""Compute Engine tools (9): instances are rows with a status state machine (RUNNING <->
TERMINATED; create, start, stop, reset and delete each record an operation that is DONE at
once), in a fixed zone catalogue (server config `zones`, else the default below)."""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import Field

from mock_servers.core import sql
from mock_servers.core.errors import Code, ToolFailure, invalid, not_found
from mock_servers.core.times import instant
from mock_servers.core.toolkit import Call
from mock_servers.google_cloud import base
from mock_servers.google_cloud.base import toolbox

ZONES = (("asia-east1-a", "asia-east1"), ("europe-north1-a", "europe-north1"), ("europe-west1-b", "europe-west1"),
         ("us-central1-a", "us-central1"), ("us-central1-b", "us-central1"), ("us-east1-b", "us-east1"),
         ("us-west1-a", "us-west1"))
MACHINE_TYPES = ("e2-micro", "e2-small", "e2-medium", "e2-standard-2", "e2-standard-4", "e2-standard-8",
                 "n1-standard-1", "n1-standard-2", "n1-standard-4", "n2-standard-2", "n2-standard-4",
                 "n2-standard-8", "c2-standard-4")
_NAME = re.compile(r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?")
InstanceName = Annotated[str, Field(min_length=1, max_length=63, description="Instance name")]
Zone = Annotated[str, Field(min_length=1, max_length=64, description="Zone, from compute_list_zones")]
_INSTANCE = "SELECT name, zone, machine_type, status, created FROM gce_instance"


def zones(call: Call) -> list[tuple[str, str]]:
    configured = call.config.get("zones")
    return [(str(z), str(r)) for z, r in configured] if configured else list(ZONES)


def _zone(call: Call, zone: str) -> str:
    if zone not in {z for z, _ in zones(call)}:
        raise invalid(f"unknown zone '{zone[:64]}'", hint="see compute_list_zones")
    return zone


def _view(row: tuple[Any, ...]) -> dict[str, Any]:
    return {"name": row[0], "zone": row[1], "machine_type": row[2], "status": row[3], "created": row[4]}


def _instance(call: Call, name: str, zone: str) -> dict[str, Any]:
    found = sql.run(call.session, f"{_INSTANCE} WHERE name = ? AND zone = ?", (name, _zone(call, zone))).fetchone()
    if found is None:
        raise not_found(f"instance '{name}' does not exist in zone {zone}", hint="see compute_list_instances")
    return _view(tuple(found))


def _operation(call: Call, zone: str, kind: str, target: str) -> dict[str, Any]:
    cur = sql.run(call.session, "INSERT INTO gce_operation (name, zone, kind, target, status, created) "
                  "VALUES ('', ?, ?, ?, 'DONE', ?)", (zone, kind, target, instant(call.now)))
    name = f"operation-{base.name_id(call, 'gce-operation', int(cur.lastrowid or 0))}"
    sql.run(call.session, "UPDATE gce_operation SET name = ? WHERE id = ?", (name, cur.lastrowid))
    return {"name": name, "operation_type": kind, "status": "DONE", "target": target}


def _set_status(call: Call, name: str, zone: str, status: str) -> None:
    sql.run(call.session, "UPDATE gce_instance SET status = ? WHERE name = ? AND zone = ?", (status, name, zone))


@toolbox.tool(rw="read")
def compute_list_instances(call: Call, zone: Annotated[str, Field(
        max_length=64, description="Only this zone (empty: every zone)")] = "") -> dict[str, Any]:
    """List instances by zone and name. Returns {instances:[{name,zone,machine_type,status,created}],
    total}."""
    where, params = ("WHERE zone = ?", (_zone(call, zone),)) if zone else ("", ())
    found = sql.run(call.session, f"{_INSTANCE} {where} ORDER BY zone, name", params).fetchall()
    return {"instances": [_view(tuple(r)) for r in found], "total": len(found)}


@toolbox.tool(rw="write", idempotent=False)
def compute_create_instance(call: Call, instance_name: InstanceName, zone: Zone,
                            machine_type: Annotated[str, Field(min_length=1, max_length=64, description=(
                                "Machine type, e.g. e2-micro, e2-standard-2, n2-standard-4"))] = "e2-micro",
                            ) -> dict[str, Any]:
    """Create an instance; it is RUNNING when this returns. Names: lower-case letters, digits and
    '-', starting with a letter (1-63). Returns the instance {name,zone,machine_type,status,created}
    with its operation {name,operation_type,status,target}."""
    if not _NAME.fullmatch(instance_name):
        raise invalid(f"invalid instance name '{instance_name}': lower-case letters, digits and '-', "
                      "starting with a letter, not ending with '-'")
    if machine_type not in MACHINE_TYPES:
        raise invalid(f"unknown machine type '{machine_type}'; allowed: {', '.join(MACHINE_TYPES)}")
    _zone(call, zone)
    if sql.scalar(call.session, "SELECT 1 FROM gce_instance WHERE name = ? AND zone = ?", (instance_name, zone)):
        raise ToolFailure(Code.ALREADY_EXISTS, f"instance '{instance_name}' already exists in zone {zone}")
    sql.run(call.session, "INSERT INTO gce_instance (name, zone, machine_type, status, created) "
            "VALUES (?, ?, ?, 'RUNNING', ?)", (instance_name, zone, machine_type, instant(call.now)))
    operation = _operation(call, zone, "insert", instance_name)
    return {**_instance(call, instance_name, zone), "operation": operation}


@toolbox.tool(rw="write", destructive=True)
def compute_delete_instance(call: Call, instance_name: InstanceName, zone: Zone) -> dict[str, Any]:
    """Delete an instance (in any state). Returns {deleted:name,operation}."""
    _instance(call, instance_name, zone)
    sql.run(call.session, "DELETE FROM gce_instance WHERE name = ? AND zone = ?", (instance_name, zone))
    return {"deleted": instance_name, "operation": _operation(call, zone, "delete", instance_name)}


def _transition(call: Call, name: str, zone: str, kind: str, need: str, status: str) -> dict[str, Any]:
    current = _instance(call, name, zone)
    if current["status"] != need:
        raise ToolFailure(Code.FAILED_PRECONDITION, f"instance '{name}' is {current['status']}; {kind} needs {need}")
    _set_status(call, name, zone, status)
    operation = _operation(call, zone, kind, name)
    return {**_instance(call, name, zone), "operation": operation}


@toolbox.tool(rw="write")
def compute_start_instance(call: Call, instance_name: InstanceName, zone: Zone) -> dict[str, Any]:
    """Start a TERMINATED instance (a RUNNING one is FAILED_PRECONDITION). Returns the instance with
    its operation."""
    return _transition(call, instance_name, zone, "start", "TERMINATED", "RUNNING")


@toolbox.tool(rw="write")
def compute_stop_instance(call: Call, instance_name: InstanceName, zone: Zone) -> dict[str, Any]:
    """Stop a RUNNING instance (it becomes TERMINATED; a stopped one is FAILED_PRECONDITION).
    Returns the instance with its operation."""
    return _transition(call, instance_name, zone, "stop", "RUNNING", "TERMINATED")


@toolbox.tool(rw="write")
def compute_restart_instance(call: Call, instance_name: InstanceName, zone: Zone) -> dict[str, Any]:
    """Reset a RUNNING instance (it stays RUNNING); not RUNNING is FAILED_PRECONDITION and a missing
    instance NOT_FOUND. Returns the instance with its operation."""
    return _transition(call, instance_name, zone, "reset", "RUNNING", "RUNNING")


@toolbox.tool(rw="read")
def compute_get_instance(call: Call, instance_name: InstanceName, zone: Zone) -> dict[str, Any]:
    """Get an instance. Returns {name,zone,machine_type,status,created}."""
    return _instance(call, instance_name, zone)


@toolbox.tool(rw="read")
def compute_list_zones(call: Call) -> dict[str, Any]:
    """List the zones instances may be created in. Returns {zones:[{name,region,status}]}."""
    return {"zones": [{"name": z, "region": r, "status": "UP"} for z, r in zones(call)]}


@toolbox.tool(rw="read")
def compute_wait_for_operation(
        call: Call, operation_name: Annotated[str, Field(min_length=1, max_length=100, description="Operation name")],
        zone: Zone,
        timeout_minutes: Annotated[int, Field(ge=1, le=60, description="Longest wait in minutes")] = 5,
) -> dict[str, Any]:
    """Wait for an operation. Operations finish when the call that started them returns, so this
    answers at once. Returns {name,status:"DONE",target}; an unknown operation (or one of another
    zone) is NOT_FOUND."""
    found = sql.run(call.session, "SELECT name, status, target FROM gce_operation WHERE name = ? AND zone = ?",
                    (operation_name, _zone(call, zone))).fetchone()
    if found is None:
        raise not_found(f"operation '{operation_name}' does not exist in zone {zone}")
    return {"name": found[0], "status": found[1], "target": found[2]}
