"""payable_invoice_checker: the plan holds every edge case at every size, with the pagination
trap; every field the task needs comes back from the PDFs' extracted text in every layout; the
warehouse starts as declared; the checker accepts the documented normalisations of a right
answer and rejects wrong ones, one test per rule. (Oracle, mutants and lengths at every tier:
the generic acceptance suite.)"""

from __future__ import annotations

import asyncio
import hashlib
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from envs.core.registry import get_task
from envs.payable_invoice_checker import (
    CREDENTIALS_FILE,
    FILES,
    FLAG_COMMENT,
    ID_TOKEN,
    INITIAL_FLAG_COMMENT,
    INVOICE_COLUMNS,
    INVOICES,
    MAIL,
    NEW_INVOICES,
    NEW_PAYMENTS,
    NOTICE,
    PAYMENT_COLUMNS,
    PAYMENTS,
    TRAP_ROWS,
    table,
)
from generators.payable_invoice_checker import plan_world
from generators.payable_invoice_checker.plan import PAID, PARTIAL, REVIEW, TEMPLATES, UNPAID, Plan, num_managers
from loca.core.credentials import parse_credentials
from loca.core.rng import WorldRng
from loca.core.world import World
from loca.validate import play_script
from scaffolds.oracles.payable_invoice_checker import parse_invoice
from tests.harness import task_call

TASK = get_task("payable_invoice_checker")
ANSWER = dict[str, Any]


def _plan(k: int, seed: int, existing: int | None = None) -> Plan:
    return plan_world(WorldRng(TASK.name, seed), k, 60 * k if existing is None else existing)


@pytest.mark.parametrize("k", [5, 6, 8, 13, 40, 270])
@pytest.mark.parametrize("seed", range(5))
def test_plan_has_every_edge_case(k: int, seed: int) -> None:
    plan = _plan(k, seed)
    assert len(plan.invoices) == k and len(plan.managers) == num_managers(k) == min(10, max(2, 2 + k // 3))
    old = [row.invoice_id for row in plan.existing]
    ids = old + [i.invoice_id for i in plan.invoices if not i.recorded]
    assert len(ids) == len(set(ids)) and all(ID_TOKEN.fullmatch(i) for i in ids)
    recorded = [i for i in plan.invoices if i.recorded]
    assert recorded and all(old.index(i.invoice_id) >= TRAP_ROWS for i in recorded), "the pagination trap"
    assert len(plan.existing) == 60 * k + len(recorded)
    new = [i for i in plan.invoices if not i.recorded]
    statuses = Counter(i.status for i in new)
    assert all(statuses[s] for s in (PAID, PARTIAL, UNPAID, REVIEW))
    assert [i for i in new if i.status == REVIEW and i.subtle] and [i for i in new if not i.subtle]
    assert all(i.tax > 0 and 2 <= len(i.items) <= 6 for i in plan.invoices)
    buyers = {i.buyer.email for i in plan.invoices}
    calm = buyers - set(plan.mail())
    assert calm, "a manager whose invoices are all paid"
    old_due = {row.purchaser for row in plan.existing if row.outstanding and row.invoice_id not in
               {i.invoice_id for i in recorded}}
    assert set(plan.mail()) <= old_due and calm & old_due, "old outstanding rows of the same managers"
    assert all(row.issued.year in (2022, 2023) for row in plan.existing if row.invoice_id not in
               {i.invoice_id for i in recorded})
    assert {i.template for i in plan.invoices} == set(range(TEMPLATES))


def test_same_seed_same_plan_and_old_rows_move_no_invoice() -> None:
    assert _plan(9, 3) == _plan(9, 3)
    assert _plan(9, 4).invoices != _plan(9, 3).invoices
    few, many = _plan(9, 3, 200), _plan(9, 3, 900)
    assert few.invoices == many.invoices and few.mail() == many.mail()


def test_subtle_share_is_about_forty_percent() -> None:
    invoices = [i for seed in range(5) for i in _plan(270, seed).invoices]
    share = sum(i.subtle for i in invoices) / len(invoices)
    assert 0.33 < share < 0.47


# ------------------------------------------------------------------ a generated world

def _call(world: World, name: str, **args: Any) -> Any:
    return task_call(world, TASK, name, **args)


def _login(world: World) -> None:
    address, password = parse_credentials(_call(world, "filesystem_read_text_file", path=CREDENTIALS_FILE))
    _call(world, "email_login", email=address, password=password)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[World, Plan]:
    k, seed = 30, 1
    world = TASK.generate(tmp_path_factory.mktemp("pic") / "w", {"num_invoices": k}, seed)
    return world, _plan(k, seed)


def test_every_field_comes_back_from_the_pdf_text(built: tuple[World, Plan]) -> None:
    world, plan = built
    seen = set()
    for invoice in plan.invoices:
        text = _call(world, "pdf_tools_read_pdf_pages", pdf_file_path=f"{FILES}/{invoice.invoice_id}.pdf")
        got = parse_invoice(text)
        assert (got.invoice_id, got.supplier, got.total, got.subtotal, got.buyer, got.issued, got.status,
                got.paid) == (invoice.invoice_id, invoice.supplier.name, invoice.total, invoice.subtotal,
                              invoice.buyer.email, invoice.issued.isoformat(), invoice.status, invoice.paid)
        assert got.supplier_email == invoice.supplier.email != got.buyer
        seen.add((invoice.template, invoice.subtle))
    assert seen == {(t, s) for t in range(TEMPLATES) for s in (True, False)}


def test_warehouse_starts_as_declared(built: tuple[World, Plan]) -> None:
    world, plan = built
    for name, columns in ((INVOICES, INVOICE_COLUMNS), (PAYMENTS, PAYMENT_COLUMNS)):
        described = _call(world, "snowflake_describe_table", table_name=table(name))["data"]
        assert [(c["COLUMN_NAME"], c["DATA_TYPE"]) for c in described] == list(columns.items())
    flag = _call(world, "snowflake_describe_table", table_name=table(PAYMENTS))["data"][-1]
    assert flag["COMMENT"] == INITIAL_FLAG_COMMENT != FLAG_COMMENT
    listed = _call(world, "snowflake_read_query", query=f"SELECT INVOICE_ID FROM {table(INVOICES)}")
    assert [r["INVOICE_ID"] for r in listed["data"]] == [r.invoice_id for r in plan.existing]


def test_pdf_bytes_are_those_of_generator_version_2(built: tuple[World, Plan]) -> None:
    """The invoice PDFs, written directly, are the files reportlab's canvas wrote for
    generator version 2 (a change of their bytes needs a new version and calibration)."""
    digest = hashlib.sha256()
    for path in sorted((built[0].workspace / FILES).glob("*.pdf")):
        digest.update(path.read_bytes())
    assert digest.hexdigest() == "78cdb9fa16845bae9ce771876fd1556e957a561f5d0c868735113c3c6bb7e608"


# ------------------------------------------------------------------ the checker

@pytest.fixture
def world(tmp_path: Path) -> World:
    """A world of 8 invoices with its mailbox logged in and nothing done yet."""
    made = TASK.generate(tmp_path / "w", {"num_invoices": 8}, 5)
    _login(made)
    return made


def _answer(world: World) -> ANSWER:
    answer: ANSWER = world.read_truth()["answer"]
    return answer


def _sql(value: Any) -> str:
    return str(value) if isinstance(value, int | float) else "'" + str(value).replace("'", "''") + "'"


def _insert(world: World, name: str, entries: list[dict[str, Any]]) -> None:
    columns = list(entries[0])
    values = ", ".join("(" + ", ".join(_sql(e[c]) for c in columns) + ")" for e in entries)
    _call(world, "snowflake_write_query", query=f"INSERT INTO {table(name)} ({', '.join(columns)}) VALUES {values}")


Edit = Callable[[dict[str, Any]], dict[str, Any]]


def _file_names(ids: list[str]) -> str:
    return "\n".join(f"{invoice_id}.pdf" for invoice_id in ids)


def _solve(world: World, invoice: Edit = dict, payment: Edit = dict, comment: str = FLAG_COMMENT,
           body: Callable[[list[str]], str] = _file_names,
           subject: str = NOTICE.subject or "", skip: int | None = None) -> None:
    answer = _answer(world)
    _insert(world, INVOICES, [invoice(dict(e)) for e in answer[NEW_INVOICES]])
    _insert(world, PAYMENTS, [payment(dict(e)) for e in answer[NEW_PAYMENTS]])
    _call(world, "snowflake_write_query", query=f"COMMENT ON COLUMN {table(PAYMENTS)}.OUTSTANDING_FLAG IS '{comment}'")
    for entry in [e for i, e in enumerate(answer[MAIL]) if i != skip]:
        _call(world, "email_send_email", to=entry["to"], subject=subject, body=body(entry["invoices"]))


def _failed(world: World) -> list[str]:
    verdict = TASK.check(world)
    assert not verdict.errored, verdict
    return verdict.failed_names()


def test_oracle_passes_and_noop_fails(tmp_path: Path) -> None:
    made = TASK.generate(tmp_path / "w", {"num_invoices": 8}, 1)
    assert asyncio.run(play_script(TASK, made, "oracle")).passed
    made = TASK.generate(tmp_path / "w", {"num_invoices": 8}, 1)
    assert asyncio.run(play_script(TASK, made, "noop")).failed_names() == [
        "invoices_new", "payments_new", "comment", "recipients"]


def test_checker_accepts_documented_normalisations(world: World) -> None:
    def invoice(e: dict[str, Any]) -> dict[str, Any]:
        return {**e, "SUPPLIER_NAME": f"  {e['SUPPLIER_NAME'].replace(' ', '   ')} ",
                "PURCHASER_EMAIL": e["PURCHASER_EMAIL"].upper(), "INVOICE_AMOUNT": float(e["INVOICE_AMOUNT"])}

    _solve(world, invoice, lambda e: {**e, "PAYMENT_AMOUNT": float(e["PAYMENT_AMOUNT"]) + 0.004},
           comment=f"  {FLAG_COMMENT} ", body=lambda ids: "Open: " + ", ".join(ids) + ".")
    assert _failed(world) == []


def test_wrong_cells_fail_invoices_new(world: World) -> None:
    _solve(world, lambda e: {**e, "INVOICE_AMOUNT": float(e["INVOICE_AMOUNT"]) + 0.01})
    assert _failed(world) == ["invoices_new"]


def test_a_new_invoice_twice_fails_invoices_new(world: World) -> None:
    _solve(world)
    _insert(world, INVOICES, _answer(world)[NEW_INVOICES][:1])
    assert _failed(world) == ["invoices_new"]


def test_wrong_flag_fails_payments_new(world: World) -> None:
    _solve(world, payment=lambda e: {**e, "OUTSTANDING_FLAG": 1 - e["OUTSTANDING_FLAG"]})
    assert _failed(world) == ["payments_new"]


def test_changed_or_deleted_or_repeated_old_row_fails_existing_rows(tmp_path: Path) -> None:
    old = "SELECT INVOICE_ID FROM {} LIMIT 1 OFFSET 7"
    for statement in (f"UPDATE {table(PAYMENTS)} SET PAYMENT_AMOUNT = PAYMENT_AMOUNT + 1 WHERE INVOICE_ID = ",
                      f"DELETE FROM {table(INVOICES)} WHERE INVOICE_ID = "):
        made = TASK.generate(tmp_path / "w", {"num_invoices": 8}, 5)
        _login(made)
        _solve(made)
        target = _call(made, "snowflake_read_query", query=old.format(table(INVOICES)))["data"][0]["INVOICE_ID"]
        _call(made, "snowflake_write_query", query=f"{statement}'{target}'")
        assert _failed(made) == ["existing_rows"]
    made = TASK.generate(tmp_path / "w", {"num_invoices": 8}, 5)
    _login(made)
    _solve(made)
    recorded = made.read_truth()["recorded"][0]
    _call(made, "snowflake_write_query", query=f"INSERT INTO {table(PAYMENTS)} SELECT * FROM {table(PAYMENTS)} "
                                               f"WHERE INVOICE_ID = '{recorded}'")
    assert _failed(made) == ["existing_rows"]


def test_wrong_comment_fails_comment(world: World) -> None:
    _solve(world, comment="0=paid, 1=outstanding")
    assert _failed(world) == ["comment"]


def test_changed_column_fails_schema(world: World) -> None:
    _solve(world)
    _call(world, "snowflake_write_query", query=f"ALTER TABLE {table(INVOICES)} ADD COLUMN NOTE VARCHAR")
    assert _failed(world) == ["schema"]


def test_extra_or_missing_or_repeated_recipient_fails_recipients(tmp_path: Path) -> None:
    def fresh() -> World:
        made = TASK.generate(tmp_path / "w", {"num_invoices": 8}, 5)
        _login(made)
        return made

    made = fresh()
    _solve(made)
    calm = sorted({e["PURCHASER_EMAIL"] for e in _answer(made)[NEW_INVOICES]} -
                  {e["to"] for e in _answer(made)[MAIL]})[0]
    _call(made, "email_send_email", to=calm, subject=NOTICE.subject, body="Nothing open.")
    assert _failed(made) == ["recipients"]
    made = fresh()
    _solve(made)
    first = _answer(made)[MAIL][0]
    _call(made, "email_send_email", to=first["to"], subject=NOTICE.subject, body=" ".join(first["invoices"]))
    assert _failed(made) == ["recipients"]
    made = fresh()
    _solve(made, skip=0)
    assert _failed(made) == ["recipients"]


@pytest.mark.parametrize("body", [
    lambda ids: "\n".join(f"{i}.pdf" for i in ids[1:]) + "\nRegards",  # one missing
    lambda ids: "\n".join(f"{i}.pdf" for i in ids) + "\nAlso BILL-0000000.pdf and {old}.pdf",  # an old one
    lambda ids: "\n".join(f"X{i}.pdf" for i in ids),  # not whole tokens
])
def test_wrong_invoice_list_fails_email_content(world: World, body: Callable[[list[str]], str]) -> None:
    old = world.read_truth()["existing"][INVOICES][0][0]
    _solve(world, body=lambda ids: body(ids).replace("{old}", old))
    assert _failed(world) == ["email_content"]


def test_wrong_subject_fails_email_content(world: World) -> None:
    _solve(world, subject="process outstanding invoices")
    assert _failed(world) == ["email_content"]
