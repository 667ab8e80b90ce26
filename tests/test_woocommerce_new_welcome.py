"""woocommerce_new_welcome: the plan holds every edge case at every size, with both pagination
traps; the store, the CRM table and the workspace start as declared; the checker accepts the
readings of a right answer a careful agent might write and rejects wrong ones, one test per rule.
(Oracle, mutants and lengths at every tier: the generic acceptance suite.)"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from envs.core.registry import get_task
from envs.woocommerce_new_welcome import (
    COMPLETED,
    COUPON,
    CREDENTIALS_FILE,
    CRM,
    CRM_COLUMNS,
    DATASET,
    MAIL,
    NOW,
    TABLE,
    TEMPLATE_FILE,
    TRAP_PAGE,
    WELCOME,
    WINDOW,
)
from generators.woocommerce_new_welcome.model import ONCE, Plan, counts, default_idle
from generators.woocommerce_new_welcome.plan import edge_cases, plan_world
from loca.core.credentials import parse_credentials
from loca.core.outputs import fill
from loca.core.rng import WorldRng
from loca.core.world import World
from loca.validate import play_script
from tests.harness import task_call, world_copy
from tests.top_of_scale import oracle_calls, top_world

TASK = get_task("woocommerce_new_welcome")
Row = dict[str, Any]
CRM_TABLE = f"`{DATASET}.{TABLE}`"


def _plan(orders: int, seed: int, idle: int | None = None) -> Plan:
    return plan_world(WorldRng(TASK.name, seed), orders, default_idle(orders) if idle is None else idle)


@pytest.mark.parametrize("orders", [15, 16, 23, 60, 200, 525])
@pytest.mark.parametrize("seed", range(5))
def test_plan_has_every_edge_case(orders: int, seed: int) -> None:
    plan = _plan(orders, seed)
    assert edge_cases(plan) == []
    c = counts(orders, default_idle(orders))
    assert len(plan.orders) == orders and len(plan.new_customers()) == c.new == max(5, round(orders / 6 + 1e-9))
    start = NOW - WINDOW
    old = [o for o in plan.orders if o.completed and o.completed <= start and plan.customers[o.customer].kind == ONCE]
    placed = [o for o in plan.orders if o.status != COMPLETED and o.created > start]
    assert len(old) == len(placed) == c.out_of_window == c.incomplete == max(2, round(orders / 40 + 1e-9))
    assert len({c.email for c in plan.customers}) == len(plan.customers)
    assert [o.created for o in plan.orders] == sorted(o.created for o in plan.orders)
    assert [c.created for c in plan.customers] == sorted(c.created for c in plan.customers)


@pytest.mark.parametrize("seed", range(5))
def test_the_largest_plan_has_every_edge_case(seed: int) -> None:
    orders = TASK.spec.scale.hi
    plan = _plan(orders, seed, 10_000)  # the idle customers of a world of about 2.3M tokens
    assert edge_cases(plan) == []
    assert len(plan.orders) == orders and len(plan.new_customers()) == counts(orders, 10_000).new
    assert len({c.email for c in plan.customers}) == len({c.full_name.lower() for c in plan.customers}) == len(
        plan.customers)


def test_same_seed_same_plan_and_idle_customers_move_no_new_one() -> None:
    assert _plan(40, 3) == _plan(40, 3)
    assert _plan(40, 4).orders != _plan(40, 3).orders
    few, many = _plan(40, 3, 0), _plan(40, 3, 12)

    def new(plan: Plan) -> list[tuple[str, Decimal, Any, Any]]:
        return sorted((plan.customers[c].email, plan.orders[n].total, plan.orders[n].created, plan.orders[n].completed)
                      for c, n in plan.new_customers())

    assert new(few) == new(many) and len(many.customers) == len(few.customers) + 12
    assert [c.kind for c in many.customers].count("idle") == 12


# ------------------------------------------------------------------ a generated world

def _call(world: World, name: str, **args: Any) -> Any:
    return task_call(world, TASK, name, **args)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[World, Plan]:
    orders, seed = 60, 1
    world = TASK.generate(tmp_path_factory.mktemp("nw") / "w", {"total_orders": orders}, seed)
    return world, _plan(orders, seed)


def test_the_store_shows_the_planned_orders_and_both_traps(built: tuple[World, Plan]) -> None:
    world, plan = built
    shown = []
    for page in range(1, 4):
        shown += _call(world, "woocommerce_woo_orders_list", perPage=100, page=page, orderby="id", order="asc")["items"]
    assert [(o["status"], o["total"], o["date_created"], o["date_completed"], o["customer_id"]) for o in shown] == [
        (o.status, f"{o.total:.2f}", o.created.strftime("%Y-%m-%dT%H:%M:%S"),
         o.completed and o.completed.strftime("%Y-%m-%dT%H:%M:%S"), o.customer + 1) for o in plan.orders]
    new_ids = {c + 1 for c, _ in plan.new_customers()}
    first = _call(world, "woocommerce_woo_orders_list")["items"]
    assert len(first) == TRAP_PAGE and {n + 1 for _, n in plan.new_customers()} - {o["id"] for o in first}
    people = _call(world, "woocommerce_woo_customers_list")["items"]
    assert len(people) == TRAP_PAGE and new_ids - {p["id"] for p in people}
    c, _ = plan.new_customers()[0]
    got = _call(world, "woocommerce_woo_customers_get", customerId=c + 1)
    person = plan.customers[c]
    assert (got["email"], got["first_name"], got["last_name"], got["billing"]["phone"]) == (
        person.email, person.first, person.last, person.phone)


def test_crm_and_workspace_start_as_declared(built: tuple[World, Plan]) -> None:
    world, plan = built
    info = _call(world, "google_cloud_bigquery_get_table_info", dataset_id=DATASET, table_id=TABLE)
    assert [(f["name"], f["type"]) for f in info["schema"]] == list(CRM_COLUMNS.items())
    rows = _call(world, "google_cloud_bigquery_run_query", query=f"SELECT * FROM {CRM_TABLE} ORDER BY id")["rows"]
    assert [list(r.values()) for r in rows] == world.read_truth()["existing"]
    assert len(rows) == len(plan.crm) and world.read_truth()["next_id"] == len(rows) + 1
    assert any(r["welcome_email_date"] is None and r["welcome_email_sent"] is False for r in rows)
    template = (world.workspace / TEMPLATE_FILE).read_text()
    assert template.startswith("Subject: ") and COUPON in template
    for placeholder in ("[Store Name]", "[Customer Name]", "[Order ID]", "[Order Amount]", "[Order Date]"):
        assert placeholder in template
    address, password = parse_credentials((world.workspace / CREDENTIALS_FILE).read_text())
    assert _call(world, "email_login", email=address, password=password)["logged_in"] is True


# ------------------------------------------------------------------ the checker

@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> World:
    return TASK.generate(tmp_path_factory.mktemp("nw") / "w", {"total_orders": 15}, 2)


@pytest.fixture
def world(base: World, tmp_path: Path) -> World:
    """A copy of a 15-order world with the admin mailbox logged in and nothing done yet."""
    made = world_copy(base, tmp_path / "w")
    address, password = parse_credentials((made.workspace / CREDENTIALS_FILE).read_text())
    _call(made, "email_login", email=address, password=password)
    return made


def _answer(world: World) -> dict[str, Any]:
    answer: dict[str, Any] = world.read_truth()["answer"]
    return answer


def _sql(value: Any) -> str:
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return str(value).upper()
    return str(value) if isinstance(value, int) else "'" + str(value).replace("'", "\\'") + "'"


def _insert(world: World, rows: list[Row]) -> None:
    columns = list(rows[0])
    values = ", ".join("(" + ", ".join(_sql(r[c]) for c in columns) + ")" for r in rows)
    _call(world, "google_cloud_bigquery_run_query",
          query=f"INSERT INTO {CRM_TABLE} ({', '.join(columns)}) VALUES {values}")


def _rows(world: World, edit: Callable[[Row], Row] = dict, first: int | None = None) -> list[Row]:
    start = world.read_truth()["next_id"] if first is None else first
    return [edit({"id": start + n, **entry, "welcome_email_sent": True, "welcome_email_date": "2025-03-10",
                  "sync_date": "2025-03-10"}) for n, entry in enumerate(_answer(world)[CRM])]


def _template(world: World) -> tuple[str, str]:
    assert WELCOME.template is not None
    return WELCOME.template.parts((world.workspace / TEMPLATE_FILE).read_text())


def _subject(world: World, entry: Row) -> str:
    return fill(_template(world)[0], entry["fill"])


def _body(world: World, entry: Row) -> str:
    return fill(_template(world)[1], entry["fill"])


def _solve(world: World, row: Callable[[Row], Row] = dict, body: Callable[[World, Row], str] = _body,
           subject: str | None = None, **send: Any) -> None:
    _insert(world, _rows(world, row))
    for entry in _answer(world)[MAIL]:
        _call(world, "email_send_email", to=entry["to"], subject=subject or _subject(world, entry),
              body=body(world, entry), **send)


def _failed(world: World) -> list[str]:
    verdict = TASK.check(world)
    assert not verdict.errored, verdict
    return verdict.failed_names()


def test_oracle_passes_and_noop_fails(base: World, tmp_path: Path) -> None:
    assert asyncio.run(play_script(TASK, world_copy(base, tmp_path / "a"), "oracle")).passed
    # no row and no message: crm_new_values and email_content have nothing to judge, which is no pass
    assert asyncio.run(play_script(TASK, world_copy(base, tmp_path / "b"), "noop")).failed_names() == [
        "crm_new_set", "crm_new_values", "email_recipients", "email_content"]


def test_the_plain_answer_passes(world: World) -> None:
    _solve(world)
    assert _failed(world) == []


def test_checker_accepts_a_careful_agents_readings(world: World) -> None:
    """Rows one at a time in another order, e-mail and names spaced and cased, the phone as bare
    digits; the filled template sent as HTML with the prose in other case, the subject spaced and
    the recipient written as `Name <ADDRESS>`."""
    rows = _rows(world, lambda r: {**r, "email": r["email"].upper(), "first_name": f" {r['first_name']} ",
                                   "phone": "".join(ch for ch in r["phone"] if ch.isdigit())})
    for row in reversed(rows):
        _insert(world, [row])
    for entry in _answer(world)[MAIL]:
        paragraphs = _body(world, entry).split("\n\n")
        html = "".join(f"<p>{p.replace(entry['fill']['[Customer Name]'], '<b>{}</b>')}</p>" for p in paragraphs)
        html = html.format(entry["fill"]["[Customer Name]"]).replace("Welcome", "WELCOME")
        _call(world, "email_send_email", to=f"Customer <{entry['to'].upper()}>", subject=f"  {_subject(world, entry)} ",
              body="(HTML message)", html_body=html)
    assert _failed(world) == []


def test_rows_loaded_from_a_csv_file_pass(world: World) -> None:
    lines = [",".join(CRM_COLUMNS)] + [",".join("true" if v is True else str(v) for v in r.values())
                                       for r in _rows(world)]
    (world.workspace / "new_rows.csv").write_text("\n".join(lines) + "\n")
    _call(world, "google_cloud_bigquery_load_csv_data", dataset_id=DATASET, table_id=TABLE,
          csv_file_path="new_rows.csv", write_mode="WRITE_APPEND")
    for entry in _answer(world)[MAIL]:
        _call(world, "email_send_email", to=entry["to"], subject=_subject(world, entry), body=_body(world, entry))
    assert _failed(world) == []


@pytest.mark.parametrize("statement", [
    "UPDATE {t} SET phone = '000' WHERE id = 1", "DELETE FROM {t} WHERE id = 1"])
def test_a_changed_or_deleted_crm_row_fails_crm_history(world: World, statement: str) -> None:
    _solve(world)
    _call(world, "google_cloud_bigquery_run_query", query=statement.format(t=CRM_TABLE))
    assert "crm_history" in _failed(world) and "no_side_effects" in _failed(world)


def test_a_repeated_crm_row_fails_crm_history(world: World) -> None:
    _solve(world)
    _call(world, "google_cloud_bigquery_run_query", query=f"INSERT INTO {CRM_TABLE} SELECT * FROM {CRM_TABLE} "
                                                          "WHERE id = 1")
    assert _failed(world) == ["crm_history", "crm_new_set"]


def test_ids_not_next_or_reused_fail_crm_new_set(world: World, tmp_path: Path, base: World) -> None:
    _insert(world, _rows(world, first=world.read_truth()["next_id"] + 1))
    assert _failed(world)[0] == "crm_new_set"
    other = world_copy(base, tmp_path / "o")
    _insert(other, _rows(other, first=world.read_truth()["next_id"] - 1))
    assert _failed(other)[:2] == ["crm_history", "crm_new_set"]


def test_missing_extra_or_twice_added_customer_fails_crm_new_set(world: World, tmp_path: Path, base: World) -> None:
    rows = _rows(world)
    _insert(world, rows[1:])
    assert _failed(world)[0] == "crm_new_set"
    twice = world_copy(base, tmp_path / "t")
    _insert(twice, [*rows, {**rows[0], "id": rows[-1]["id"] + 1}])
    assert _failed(twice)[0] == "crm_new_set"
    extra = world_copy(base, tmp_path / "e")
    repeat = _call(extra, "google_cloud_bigquery_run_query", query=f"SELECT * FROM {CRM_TABLE} LIMIT 1")["rows"][0]
    _insert(extra, [*rows, {**repeat, "id": rows[-1]["id"] + 1}])
    assert _failed(extra)[0] == "crm_new_set"


@pytest.mark.parametrize("edit", [
    lambda r: {**r, "phone": r["phone"][:-1] + ("1" if r["phone"][-1] != "1" else "2")},
    lambda r: {**r, "last_name": r["last_name"].lower()},
    lambda r: {**r, "first_order_date": "2025-03-01"},
    lambda r: {**r, "welcome_email_sent": False},
    lambda r: {**r, "welcome_email_date": None},
    lambda r: {**r, "sync_date": "2025-03-09"},
])
def test_wrong_values_fail_crm_new_values(world: World, edit: Callable[[Row], Row]) -> None:
    _solve(world, row=lambda r: edit(r) if r["id"] == world.read_truth()["next_id"] + 1 else r)
    assert _failed(world) == ["crm_new_values"]


def test_an_extra_copied_or_shared_message_fails_email_recipients(world: World, tmp_path: Path, base: World) -> None:
    _solve(world)
    first = _answer(world)[MAIL][0]
    _call(world, "email_send_email", to=first["to"], subject=_subject(world, first), body=_body(world, first))
    assert _failed(world) == ["email_recipients"]
    cc = world_copy(base, tmp_path / "cc")
    address, password = parse_credentials((cc.workspace / CREDENTIALS_FILE).read_text())
    _call(cc, "email_login", email=address, password=password)
    _solve(cc, cc=address)
    assert _failed(cc) == ["email_recipients"]


def _name(entry: Row) -> str:
    return str(entry["fill"]["[Customer Name]"])


@pytest.mark.parametrize("body", [
    lambda w, e: _body(w, e).replace(e["fill"]["[Order Amount]"], e["fill"]["[Order Amount]"][1:]),
    lambda w, e: _body(w, e).replace(e["fill"]["[Order Date]"], "[Order Date]"),
    lambda w, e: _body(w, e).replace(COUPON, "WELCOME"),
    lambda w, e: _body(w, e).replace(f"Hi {_name(e)}", "Hi there"),
    lambda w, e: _body(w, e).replace(f"Order ID: {e['fill']['[Order ID]']}", "Order ID: 1"),
    lambda w, e: _body(w, e).replace(f"Hi {_name(e)}", f"Hi {_name(e)} Smith"),  # the full name
    lambda w, e: fill(_template(w)[1], {**e["fill"], "[Order ID]": e["fill"]["[Order Date]"],
                                        "[Order Date]": e["fill"]["[Order ID]"]}),  # two values swapped
    lambda w, e: _body(w, e) + "\nP.S. Your previous order 1 shipped too.",  # text the template does not have
    lambda w, e: "\n".join(line for line in _body(w, e).splitlines() if COUPON not in line),  # a line left out
    lambda w, e: f"Hi {_name(e)}, order {e['fill']['[Order ID]']} of {e['fill']['[Order Amount]']} on "
                 f"{e['fill']['[Order Date]']}: use {COUPON}.",  # every value, none of the template's text
])
def test_a_wrong_body_fails_email_content(world: World, body: Callable[[World, Row], str]) -> None:
    _solve(world, body=body)
    assert _failed(world) == ["email_content"]


def test_the_wrong_subject_fails_email_content(world: World) -> None:
    _solve(world, subject=_template(world)[0])
    assert _failed(world) == ["email_content"]


@pytest.mark.parametrize("act", [
    lambda w: _call(w, "woocommerce_woo_orders_update", orderId=1, orderData={"customer_note": "welcomed"}),
    lambda w: _call(w, "google_cloud_bigquery_run_query", query=f"CREATE TABLE `{DATASET}.backup` AS SELECT * FROM "
                                                               f"{CRM_TABLE}"),
    lambda w: _call(w, "google_cloud_bigquery_run_query", query=f"ALTER TABLE {CRM_TABLE} ADD COLUMN note STRING"),
    lambda w: (w.workspace / TEMPLATE_FILE).write_text("Subject: x\n"),
])
def test_anything_else_changed_fails_no_side_effects(world: World, act: Callable[[World], Any]) -> None:
    _solve(world)
    act(world)
    assert _failed(world) == ["no_side_effects"]


@pytest.mark.slow
def test_the_oracle_solves_a_world_of_2m_tokens_within_the_tool_call_limit(tmp_path: Path) -> None:
    """At the top of the scale, with the idle customers of a world of about 2.3M tokens, the oracle
    (reads and one mail per new customer) stays well within the agent loop's 500 tool calls."""
    params = {"total_orders": TASK.spec.scale.hi, "num_idle_customers": 10_000}
    world = top_world(TASK, params, tmp_path / "w")
    assert (world.meta.env_description_tokens or 0) > 2_250_000
    calls, failed = oracle_calls(TASK, world)
    assert calls <= 470 and failed == []
