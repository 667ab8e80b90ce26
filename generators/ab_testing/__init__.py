"""Generator of ab_testing: BigQuery dataset `ab_testing` with one hourly clickstream table per
scenario (`ab_<scenario>`) and two distractor tables (`daily_summary`: rounded, stale daily
totals of an earlier week; `experiment_config`: one row per scenario plus a retired one), a few
unrelated buckets and pipeline log entries, and `record.csv` with its header, placeholder row
and empty overall row.

Scale: `num_scenarios` (primary); `num_days` = max(2, ceil(n/3)); `num_extra_hours` (fine, 0 by
default) appends hourly rows spread over the scenarios, never reaching now.

Every draw comes from the world's named RNG streams; Faker is seeded from them."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, model_validator
from sqlmodel import Session

from envs.ab_testing import (
    DATA_COLUMNS,
    DATASET,
    INITIAL_ROWS,
    OVERALL,
    PREFIX,
    RECORD,
    TASK,
    WINNER,
    rate_text,
)
from generators.ab_testing.plan import (
    HOURS_BEFORE_NOW,
    NOW,
    START,
    Plan,
    Scenario,
    hour_at,
    plan_world,
    scenario_hours,
)
from generators.common import PersonNames, create_world, finish_world, seeded_faker
from loca.core.clock import iso_z
from loca.core.outputs import csv_text
from loca.core.rng import WorldRng
from loca.core.world import World, WorldMeta, write_text_atomic
from mock_servers.google_cloud.seed import (
    DatasetDef,
    EntryDef,
    FieldDef,
    TableDef,
    bigquery,
    buckets,
    log_entries,
)

VERSION = "1"
PROJECT = "homepage-experiments"
SUMMARY_DAYS = 7  # daily_summary covers the week before the test
PIPELINE_LOG = "abtesting_pipeline"
HYPOTHESES = ("raises store visits", "lowers bounce", "lifts engagement", "shortens the path to the store",
              "clarifies the offer")


class Params(BaseModel):
    model_config = ConfigDict(extra="forbid")

    num_scenarios: int = Field(ge=TASK.scale.lo, le=TASK.scale.hi)
    num_extra_hours: int = Field(default=0, ge=0)

    @model_validator(mode="after")
    def _hours_before_now(self) -> Params:
        hours = max(scenario_hours(self.num_scenarios, self.num_extra_hours))
        if hours > HOURS_BEFORE_NOW:
            raise ValueError(f"{hours} hourly rows per scenario run past now (at most {HOURS_BEFORE_NOW})")
        return self

    def resolved(self) -> dict[str, int]:
        return {"num_scenarios": self.num_scenarios, "num_extra_hours": self.num_extra_hours}


def resolve_params(params: dict[str, object]) -> dict[str, int]:
    return Params.model_validate(params).resolved()


def _windows(plan: Plan) -> list[str]:
    """The time_window text of every hour index any scenario uses, formatted once."""
    return [hour_at(i).strftime("%Y-%m-%d %H:%M:%S") for i in range(max(len(s.clicks) for s in plan.scenarios))]


def _scenario_table(scenario: Scenario, windows: list[str]) -> TableDef:
    kinds = ("TIMESTAMP", "INT64", "INT64", "INT64", "INT64")
    rows = [(windows[i], c[0], v[0], c[1], v[1])
            for i, (c, v) in enumerate(zip(scenario.clicks, scenario.views, strict=True))]
    return TableDef(PREFIX + scenario.name,
                    [FieldDef(n, k, "REQUIRED") for n, k in zip(DATA_COLUMNS, kinds, strict=True)],
                    rows, description=f"Hourly homepage clicks and store views of scenario {scenario.name}")


def _daily_summary(rng: random.Random, plan: Plan) -> TableDef:
    """Daily totals rounded to tens, for the week before the test: stale, never the answer."""
    rows = []
    for day in range(SUMMARY_DAYS):
        date = (START - timedelta(days=SUMMARY_DAYS - day)).date().isoformat()
        for s in plan.scenarios:
            clicks = [round(rng.randint(200, 4000), -1) for _ in range(2)]
            rows.append((date, s.name, clicks[0], round(clicks[0] * rng.uniform(0.6, 0.8), -1),
                         clicks[1], round(clicks[1] * rng.uniform(0.6, 0.8), -1)))
    fields = [FieldDef("summary_date", "DATE"), FieldDef("scenario", "STRING"),
              *(FieldDef(n, "INT64") for n in DATA_COLUMNS[1:])]
    return TableDef("daily_summary", fields, rows, description="Daily totals (rounded), pre-test baseline week")


def _experiment_config(rng: random.Random, names: PersonNames, plan: Plan) -> TableDef:
    retired = f"{plan.scenarios[0].name.split('_')[0]}_legacy_banner"
    rows = [(s.name, f"B {rng.choice(HYPOTHESES)}", names.full(), START.date().isoformat(), "running")
            for s in plan.scenarios]
    rows.append((retired, "B raises store visits", names.full(), "2024-05-06", "retired"))
    fields = [FieldDef("scenario", "STRING"), FieldDef("hypothesis", "STRING"), FieldDef("owner", "STRING"),
              FieldDef("start_date", "DATE"), FieldDef("status", "STRING")]
    return TableDef("experiment_config", fields, sorted(rows), description="Scenario settings")


def _write_cloud(session: Session, plan: Plan, rngs: WorldRng, created: datetime) -> None:
    rng = rngs.stream("distractors")
    names = PersonNames(seeded_faker(rngs.stream("faker")), rngs.stream("people"))
    windows = _windows(plan)
    tables = [_scenario_table(s, windows) for s in plan.scenarios]
    tables += [_daily_summary(rng, plan), _experiment_config(rng, names, plan)]
    bigquery(session, PROJECT, [DatasetDef(DATASET, tables, description="Homepage A/B test clickstream")], created)
    exports = {f"exports/{(START + timedelta(days=d)).date()}.csv": f"day,{d}\n".encode() for d in range(3)}
    buckets(session, {"ab-testing-raw-exports": exports, "homepage-static-assets": {"logo.svg": b"<svg/>"}},
            created)
    log_entries(session, [EntryDef(PIPELINE_LOG, START + timedelta(days=d, hours=1), "INFO",
                                   json_payload={"job": "hourly_ingest", "day": d + 1, "status": "OK"})
                          for d in range(plan.days)])


def _answer(plan: Plan) -> list[dict[str, str]]:
    """The rows of record.csv: one per scenario by name, then the pooled row."""
    a, b = RECORD.headers[1:]
    rows = [{"scenario": s.name, a: rate_text(*s.total(0)), b: rate_text(*s.total(1))} for s in plan.scenarios]
    return [*rows, {"scenario": OVERALL, a: rate_text(*plan.pooled(0)), b: rate_text(*plan.pooled(1))}]


def generate(root: Path, params: dict[str, object], seed: int,
             target_tokens: int | None = None) -> World:
    """Build the world directory for (params, seed). Pure in its inputs: same inputs, same
    content hash."""
    p = Params.model_validate(params).resolved()
    rngs = WorldRng(TASK.name, seed)
    plan = plan_world(rngs, p["num_scenarios"], p["num_extra_hours"])
    meta = WorldMeta(task=TASK.name, seed=seed, params=p, now=iso_z(NOW), tz="UTC",
                     target_tokens=target_tokens, generator_version=VERSION,
                     accounts={"google_cloud": {"project": PROJECT}})
    world, db = create_world(root, meta, TASK.servers.values())
    with db.write() as session:
        _write_cloud(session, plan, rngs, START - timedelta(days=2))
    db.dispose()
    write_text_atomic(world.workspace / RECORD.file, csv_text(RECORD.headers, INITIAL_ROWS))
    return finish_world(world, TASK, {RECORD.file: _answer(plan), WINNER: plan.winner})
