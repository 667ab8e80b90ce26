"""Generator of machine_operating: BigQuery table `machine_operating.live_sensor` (every series'
readings every 5 minutes, anomaly sessions, exact duplicates, unknown machines, shuffled), the
parameter workbook `machine_operating_parameters.xlsx` (sheet `Operating Parameters` with the
ranges, sheet `Machine Summary` descriptive only) and no bucket.

Scale: `total_machines` m (primary); sensors per machine min(10, 2 + m // 6); hours covered
max(4, m), centred on 12:00 UTC, fewer past m = 57 so that the grid of readings stays under
400,000 (`plan.hours`); `num_unknown_readings` (readings of unknown machines in the window)
follows from m (4 + m // 2) unless calibration sets it to land on a length target."""

from __future__ import annotations

from collections import Counter
from datetime import timedelta
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from envs.machine_operating import (
    DATASET,
    PARAMS_FILE,
    PARAMS_HEADERS,
    PARAMS_SHEET,
    REPORT,
    SUMMARY_SHEET,
    TABLE,
    TASK,
)
from generators.common import create_world, finish_world
from generators.machine_operating.plan import NOW, SENSORS, Plan, default_unknown, plan_world
from loca.core.clock import iso_z
from loca.core.rng import WorldRng
from loca.core.world import World, WorldMeta, write_bytes_atomic
from mock_servers.core.snapshot import TableState
from mock_servers.excel.plain import Rows, Value, plain_workbook_bytes
from mock_servers.google_cloud.seed import DatasetDef, FieldDef, TableDef, bigquery

VERSION = "3"
PROJECT = "factory-iot-prod"
FIELDS = [FieldDef("timestamp", "TIMESTAMP", "REQUIRED", "reading time (UTC)"),
          FieldDef("machine_id", "STRING", "REQUIRED"), FieldDef("sensor_type", "STRING", "REQUIRED"),
          FieldDef("reading", "FLOAT64", "REQUIRED", "value in the sensor's unit, 2 decimals")]
SUMMARY_HEADERS = ("machine_id", "machine_description", "production_line", "sensors_monitored", "status")


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")

    total_machines: int = Field(ge=TASK.scale.lo, le=TASK.scale.hi)
    num_unknown_readings: int | None = Field(default=None, ge=0)

    def resolved(self) -> dict[str, int]:
        m, extra = self.total_machines, self.num_unknown_readings
        return {"total_machines": m, "num_unknown_readings": default_unknown(m) if extra is None else extra}


def resolve_params(params: dict[str, object]) -> dict[str, int]:
    return Params.model_validate(params).resolved()


def _sheets(plan: Plan) -> list[tuple[str, Rows]]:
    """The parameter workbook's sheets: the ranges, then the machine summary."""
    described = {m.machine_id: m for m in plan.machines}
    ranges: list[list[Value]] = [list(PARAMS_HEADERS)]
    for i, s in enumerate(plan.series):
        m = described[s.machine]
        calibrated = NOW.date() - timedelta(days=30 + (7 * i) % 200)
        ranges.append([s.machine, f"{m.description}, line {m.line}", s.sensor, SENSORS[s.sensor][0], s.low, s.high,
                       calibrated.isoformat(), (calibrated + timedelta(days=365)).isoformat()])
    counts = Counter(s.machine for s in plan.series)
    summary: list[list[Value]] = [list(SUMMARY_HEADERS)]
    summary += [[m.machine_id, m.description, f"Line {m.line}", counts[m.machine_id], "in service"]
                for m in plan.machines]
    return [(PARAMS_SHEET, ranges), (SUMMARY_SHEET, summary)]


def answer_rows(plan: Plan) -> list[dict[str, str]]:
    """The report rows as the CSV holds them, by header."""
    ranges = {(s.machine, s.sensor): s for s in plan.series}
    out = []
    for moment, machine, sensor, reading in plan.anomalies():
        s = ranges[(machine, sensor)]
        out.append(dict(zip(REPORT.headers, (moment, machine, sensor, f"{reading:.2f}",
                                             f"{s.low:.2f} - {s.high:.2f}"), strict=True)))
    return out


def generate(root: Path, params: dict[str, object], seed: int,
             target_tokens: int | None = None) -> World:
    """Build the world directory for (params, seed). Pure in its inputs: same inputs, same
    content hash."""
    p = Params.model_validate(params).resolved()
    plan = plan_world(WorldRng(TASK.name, seed), p["total_machines"], p["num_unknown_readings"])
    meta = WorldMeta(task=TASK.name, seed=seed, params=p, now=iso_z(NOW), tz="UTC",
                     target_tokens=target_tokens, generator_version=VERSION,
                     accounts={"google_cloud": {"project": PROJECT}})
    world, db = create_world(root, meta, TASK.servers.values())
    stamps = plan.stamps()
    with db.write() as session:
        table = TableDef(TABLE, FIELDS, columns=plan.columns(stamps),
                         description="live sensor readings, appended as they arrive")
        physical = bigquery(session, PROJECT, [DatasetDef(DATASET, [table], description="factory IoT telemetry")],
                            world.clock.at(0) - timedelta(days=90))
    db.dispose()
    write_bytes_atomic(world.workspace / PARAMS_FILE, plain_workbook_bytes(_sheets(plan), world.clock.at(0)))
    readings = TableState(rows=len(stamps), max_rowid=len(stamps), digest=plan.digest(stamps))
    return finish_world(world, TASK, {REPORT.file: answer_rows(plan)},
                        known_tables={physical[f"{DATASET}.{TABLE}"]: readings})
