"""Generator of excel_market_research: `Market_Data.xlsx` (RawData: yearly series in mn or bn
USD under a Total row; Methodology: weights of raw categories per internal category), the format
workbook `Market_Data_Format.xlsx` (header and placeholder rows) and `task_specific.md` (target
category and year range).

Scale: `num_raw_categories` r (primary); years = min(60, 8 + 2r); `num_internal` follows from it
(max(3, ceil(r/3))) unless calibration sets it to land on a length target."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from envs.excel_market_research import (
    DATA_FILE,
    FORMAT_FILE,
    HEADER_KEY,
    METHOD_SHEET,
    RAW_SHEET,
    REPORT,
    ROWS_KEY,
    SPECIFIC_FILE,
    TARGET_COLUMN,
    TASK,
    TOTAL,
    YEAR,
    specific_text,
)
from generators.common import create_world, finish_world
from generators.excel_market_research.plan import MOST_INTERNAL, NOW, Plan, default_internal, plan_world
from loca.core.clock import iso_z
from loca.core.rng import WorldRng
from loca.core.world import World, WorldMeta, write_bytes_atomic, write_text_atomic
from mock_servers.excel.plain import Rows, Value, plain_workbook_bytes

VERSION = "1"
PLACEHOLDERS = 3
METHOD_CORNER = "Internal category"


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")

    num_raw_categories: int = Field(ge=TASK.scale.lo, le=TASK.scale.hi)
    num_internal: int | None = Field(default=None, ge=0, le=MOST_INTERNAL)

    def resolved(self) -> dict[str, int]:
        raw, internal = self.num_raw_categories, self.num_internal
        return {"num_raw_categories": raw,
                "num_internal": default_internal(raw) if internal is None else max(3, internal)}


def resolve_params(params: dict[str, object]) -> dict[str, int]:
    return Params.model_validate(params).resolved()


def report_header(plan: Plan) -> list[str]:
    return [YEAR, *(f"{r.name} %" for r in plan.raws), TARGET_COLUMN]


def _data_sheets(plan: Plan) -> list[tuple[str, Rows]]:
    """RawData (years under the header, then the Total row) and Methodology."""
    raw: list[list[Value]] = [[YEAR, *(r.header for r in plan.raws)]]
    raw += [[year, *(r.values[i] for r in plan.raws)] for i, year in enumerate(plan.years)]
    raw.append([TOTAL, *(round(sum(r.values), 2) for r in plan.raws)])
    method: list[list[Value]] = [[METHOD_CORNER, *(r.name for r in plan.raws)]]
    method += [[name, *weights] for name, weights in zip(plan.internal, plan.weights, strict=True)]
    return [(RAW_SHEET, raw), (METHOD_SHEET, method)]


def _format_sheets(plan: Plan) -> list[tuple[str, Rows]]:
    header: list[Value] = [*report_header(plan)]
    placeholder: list[Value] = ["YYYY", *([0.0] * (len(header) - 1))]
    return [(REPORT.sheet or "GrowthRate", [header, *([placeholder] * PLACEHOLDERS)])]


def generate(root: Path, params: dict[str, object], seed: int,
             target_tokens: int | None = None) -> World:
    """Build the world directory for (params, seed). Pure in its inputs: same inputs, same
    content hash."""
    p = Params.model_validate(params).resolved()
    plan = plan_world(WorldRng(TASK.name, seed), p["num_raw_categories"], p["num_internal"])
    meta = WorldMeta(task=TASK.name, seed=seed, params=p, now=iso_z(NOW), tz="UTC",
                     target_tokens=target_tokens, generator_version=VERSION)
    world, db = create_world(root, meta, TASK.servers.values())
    db.dispose()
    moment = world.clock.at(0)
    write_bytes_atomic(world.workspace / DATA_FILE, plain_workbook_bytes(_data_sheets(plan), moment))
    write_bytes_atomic(world.workspace / FORMAT_FILE, plain_workbook_bytes(_format_sheets(plan), moment))
    write_text_atomic(world.workspace / SPECIFIC_FILE,
                      specific_text(plan.internal[plan.target], plan.start, plan.end))
    answer = {HEADER_KEY: report_header(plan), ROWS_KEY: plan.rows()}
    return finish_world(world, TASK, {REPORT.file: answer})
