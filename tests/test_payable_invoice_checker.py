"""payable_invoice_checker: the plan holds every edge case at every size, with the pagination
trap; every field the task needs comes back from the PDFs' extracted text in every layout; the
warehouse starts as declared; the checker accepts the documented normalisations of a right
answer and rejects wrong ones, one test per rule, and any other change to the warehouse, the
mailbox or the workspace. (Oracle, mutants and lengths at every tier: the generic acceptance
suite.)"""

from __future__ import annotations

import asyncio
import gc
import hashlib
import random
from collections import Counter
from collections.abc import Callable
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from envs.core.registry import get_task
from envs.payable_invoice_checker import (
    CREDENTIALS_FILE,
    DATABASE,
    FILES,
    FLAG_COMMENT,
    ID_PAGE,
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
    SCHEMA,
    TRAP_ROWS,
    table,
)
from generators.payable_invoice_checker import plan_world
from generators.payable_invoice_checker.plan import (
    PAID,
    PARTIAL,
    REVIEW,
    TEMPLATES,
    UNPAID,
    IdMaker,
    Plan,
    Supplier,
    num_managers,
)
from loca.core.credentials import parse_credentials
from loca.core.rng import WorldRng
from loca.core.world import World
from loca.runner.config import RunConfig
from loca.validate import play_script
from scaffolds.oracles.payable_invoice_checker import parse_invoice
from tests.harness import task_call, world_copy

TASK = get_task("payable_invoice_checker")
ANSWER = dict[str, Any]


def _plan(k: int, seed: int, existing: int | None = None) -> Plan:
    return plan_world(WorldRng(TASK.name, seed), k, 60 * k if existing is None else existing)


@pytest.mark.slow
@pytest.mark.parametrize("k", [5, 6, 8, 13, 40, 270, TASK.spec.scale.hi])
@pytest.mark.parametrize("seed", range(5))
def test_plan_has_every_edge_case(k: int, seed: int) -> None:
    plan = _plan(k, seed)
    assert len(plan.invoices) == k and len(plan.managers) == num_managers(k) == min(10, max(2, 2 + k // 3))
    old = [row.invoice_id for row in plan.existing]
    ids = old + [i.invoice_id for i in plan.invoices if not i.recorded]
    assert len(ids) == len(set(ids)) and all(ID_TOKEN.fullmatch(i) for i in ids)
    recorded = [i for i in plan.invoices if i.recorded]
    position = {invoice_id: n for n, invoice_id in enumerate(old)}
    assert recorded and all(position[i.invoice_id] >= TRAP_ROWS for i in recorded), "the pagination trap"
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


LARGEST_EXISTING = 240_000  # the existing rows of a world of some 2.4M tokens at the most invoices


@pytest.mark.slow
@pytest.mark.parametrize("seed", range(5))
def test_the_largest_world_keeps_ids_unique_and_the_trap(seed: int) -> None:
    plan = _plan(TASK.spec.scale.hi, seed, LARGEST_EXISTING)
    old = [row.invoice_id for row in plan.existing]
    ids = old + [i.invoice_id for i in plan.invoices if not i.recorded]
    assert len(ids) == len(set(ids)) and all(ID_TOKEN.fullmatch(i) for i in ids)
    recorded = {i.invoice_id for i in plan.invoices if i.recorded}
    assert len(old) == LARGEST_EXISTING + len(recorded) and not recorded & set(old[:TRAP_ROWS])
    assert all(row.issued.year in (2022, 2023) for row in plan.existing if row.invoice_id not in recorded)


def test_the_oracle_s_reads_fit_an_episode_at_the_largest_world() -> None:
    """One call a PDF, one a page of existing IDs, and the rest of the work (some 20 calls: the
    credentials, the listing, the inserts, the comment, an e-mail a manager), within the limit."""
    pages = -(-(LARGEST_EXISTING + TASK.spec.scale.hi) // ID_PAGE)
    limit = RunConfig.model_fields["max_tool_calls"].default
    assert TASK.spec.scale.hi + pages + 20 + num_managers(TASK.spec.scale.hi) <= limit


def test_a_full_id_format_is_a_clear_error_not_an_endless_draw() -> None:
    """10,000 IDs a month in the `YYYYMM-NNNN` format: drawing past them stops with an error."""
    supplier = Supplier("Acme", "billing@acme-supply.com", "1 Main St", "Springfield, IL 62701",
                        "(217) 555-0100", 4, "ACM", Decimal("0.05"))
    ids = IdMaker(random.Random(7))
    made: list[str] = []
    with pytest.raises(ValueError, match="no free invoice ID of format 4 left for 2023-05"):
        while len(made) <= 10_000:
            made.append(ids.make(supplier, date(2023, 5, 17)))
    assert 9_000 < len(made) == len(set(made)) <= 10_000


@pytest.mark.parametrize("enabled", [True, False])
def test_generating_leaves_the_garbage_collector_as_it_was(enabled: bool, tmp_path: Path) -> None:
    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        TASK.generate(tmp_path / "w", {"num_invoices": 5}, 0)
        assert gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()


def test_same_seed_same_plan_and_old_rows_move_no_invoice() -> None:
    assert _plan(9, 3) == _plan(9, 3)
    assert _plan(9, 4).invoices != _plan(9, 3).invoices
    few, many = _plan(9, 3, 200), _plan(9, 3, 900)
    assert few.invoices == many.invoices and few.mail() == many.mail()


@pytest.mark.slow
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


@pytest.mark.slow
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

@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> World:
    return TASK.generate(tmp_path_factory.mktemp("pic") / "w", {"num_invoices": 8}, 5)


@pytest.fixture
def world(base: World, tmp_path: Path) -> World:
    """A copy of a world of 8 invoices with its mailbox logged in and nothing done yet."""
    made = world_copy(base, tmp_path / "w")
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


def _write(world: World, statement: str) -> None:
    _call(world, "snowflake_write_query", query=statement)


Edit = Callable[[dict[str, Any]], dict[str, Any]]


def _file_names(ids: list[str]) -> str:
    return "\n".join(f"{invoice_id}.pdf" for invoice_id in ids)


def _solve(world: World, invoice: Edit = dict, payment: Edit = dict, comment: str = FLAG_COMMENT,
           body: Callable[[list[str]], str] = _file_names,
           subject: str = NOTICE.subject or "", skip: int | None = None) -> None:
    answer = _answer(world)
    _insert(world, INVOICES, [invoice(dict(e)) for e in answer[NEW_INVOICES]])
    _insert(world, PAYMENTS, [payment(dict(e)) for e in answer[NEW_PAYMENTS]])
    _write(world, f"COMMENT ON COLUMN {table(PAYMENTS)}.OUTSTANDING_FLAG IS '{comment}'")
    for entry in [e for i, e in enumerate(answer[MAIL]) if i != skip]:
        _call(world, "email_send_email", to=entry["to"], subject=subject, body=body(entry["ids"]))


def _failed(world: World) -> list[str]:
    verdict = TASK.check(world)
    assert not verdict.errored, verdict
    return verdict.failed_names()


def _old_id(world: World) -> str:
    """An invoice ID of the old rows (past the first few), none of the PDFs'."""
    recorded = set(world.read_truth()["recorded"])
    return str(next(values[0] for values in world.read_truth()["existing"][INVOICES][7:] if values[0] not in recorded))


def _calm(world: World) -> str:
    """A manager of the PDFs with nothing outstanding among them."""
    return sorted({e["PURCHASER_EMAIL"] for e in _answer(world)[NEW_INVOICES]} -
                  {e["to"] for e in _answer(world)[MAIL]})[0]


def test_oracle_passes_and_noop_fails(base: World, tmp_path: Path) -> None:
    assert asyncio.run(play_script(TASK, world_copy(base, tmp_path / "a"), "oracle")).passed
    assert asyncio.run(play_script(TASK, world_copy(base, tmp_path / "b"), "noop")).failed_names() == [
        "invoices_new", "payments_new", "comment", "recipients", "email_content"]  # no message: nothing to judge


def test_the_plain_answer_passes(world: World) -> None:
    _solve(world)
    assert _failed(world) == []


def test_reading_the_mail_and_a_scratch_file_pass(world: World) -> None:
    """Opening the request e-mail (read flags are no change) and a new file of one's own."""
    [request] = _call(world, "email_get_emails")["emails"]
    _call(world, "email_read_email", email_id=request["id"])
    _call(world, "terminal_run_command", command="touch notes.txt")
    _solve(world)
    assert _failed(world) == []


def test_checker_accepts_documented_normalisations(world: World) -> None:
    """The new rows' names spaced, e-mails upper-cased and amounts as floats within half a cent;
    the comment spaced; the notices' file names in prose."""
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


@pytest.mark.parametrize("statement", [
    f"UPDATE {table(PAYMENTS)} SET PAYMENT_AMOUNT = PAYMENT_AMOUNT + 1 WHERE INVOICE_ID = '{{old}}'",
    f"DELETE FROM {table(INVOICES)} WHERE INVOICE_ID = '{{old}}'",
    f"UPDATE {table(INVOICES)} SET PURCHASER_EMAIL = UPPER(PURCHASER_EMAIL) WHERE INVOICE_ID = '{{old}}'",
    f"UPDATE {table(INVOICES)} SET SUPPLIER_NAME = ' ' || SUPPLIER_NAME || ' ' WHERE INVOICE_ID = '{{old}}'",
], ids=["amount", "deleted", "upper_case_email", "padded_name"])
def test_a_changed_or_deleted_old_row_fails_existing_rows(world: World, statement: str) -> None:
    """Old rows are compared exactly: a re-cased e-mail or a padded name is a change too. The
    snapshot sees every such change as well (`no_side_effects`)."""
    _solve(world)
    _write(world, statement.format(old=_old_id(world)))
    assert _failed(world) == ["existing_rows", "no_side_effects"]


def test_a_repeated_old_row_fails_existing_rows(world: World) -> None:
    _solve(world)
    recorded = world.read_truth()["recorded"][0]
    _write(world, f"INSERT INTO {table(PAYMENTS)} SELECT * FROM {table(PAYMENTS)} WHERE INVOICE_ID = '{recorded}'")
    assert _failed(world) == ["existing_rows"]


def test_wrong_comment_fails_comment(world: World) -> None:
    _solve(world, comment="0=paid, 1=outstanding")
    assert _failed(world) == ["comment"]


def test_changed_column_fails_schema(world: World) -> None:
    _solve(world)
    _write(world, f"ALTER TABLE {table(INVOICES)} ADD COLUMN NOTE VARCHAR")
    assert _failed(world) == ["schema", "no_side_effects"]  # a column row added to the catalog too


@pytest.mark.slow
@pytest.mark.parametrize("statement", [
    f"COMMENT ON TABLE {table(INVOICES)} IS 'checked'",
    f"COMMENT ON TABLE {table(PAYMENTS)} IS 'checked'",
    f"COMMENT ON COLUMN {table(INVOICES)}.SUPPLIER_NAME IS 'as printed'",
    f"COMMENT ON COLUMN {table(PAYMENTS)}.PAYMENT_AMOUNT IS 'paid so far'",
    f"CREATE TABLE {DATABASE}.{SCHEMA}.NOTES (NOTE VARCHAR)",
    f"CREATE TABLE {DATABASE}.{SCHEMA}.INVOICES_BACKUP AS SELECT * FROM {table(INVOICES)}",
    "CREATE DATABASE SCRATCH",
], ids=["comment_invoices", "comment_payments", "comment_name", "comment_amount", "create_table", "table_copy",
        "create_database"])
def test_any_other_warehouse_change_fails_no_side_effects(world: World, statement: str) -> None:
    _solve(world)
    _write(world, statement)
    assert _failed(world) == ["no_side_effects"]


def test_an_extra_message_fails_recipients(world: World) -> None:
    _solve(world)
    _call(world, "email_send_email", to=_calm(world), subject=NOTICE.subject, body="Nothing open.")
    assert _failed(world) == ["recipients"]


def test_a_second_message_to_a_manager_fails_recipients(world: World) -> None:
    _solve(world)
    first = _answer(world)[MAIL][0]
    _call(world, "email_send_email", to=first["to"], subject=NOTICE.subject, body=" ".join(first["ids"]))
    assert _failed(world) == ["recipients"]


def test_a_missing_message_fails_recipients(world: World) -> None:
    _solve(world, skip=0)
    assert _failed(world) == ["recipients"]


@pytest.mark.parametrize("for_good", [False, True], ids=["trashed", "deleted"])
def test_an_extra_message_whose_sent_copy_is_deleted_still_fails_recipients(world: World, for_good: bool) -> None:
    """Sent mail is what the mail system transferred: deleting the copy (to Trash, or from there
    for good) hides nothing, and is a change of its own (`no_side_effects`)."""
    _solve(world)
    calm = _calm(world)
    _call(world, "email_send_email", to=calm, subject=NOTICE.subject, body="Nothing open.")
    for folder in ("Sent", "Trash") if for_good else ("Sent",):
        copy = next(m for m in _call(world, "email_get_emails", folder=folder)["emails"] if m["to"] == [calm])
        _call(world, "email_delete_email", email_id=copy["id"])
    left = [m for folder in ("Sent", "Trash") for m in _call(world, "email_get_emails", folder=folder)["emails"]
            if m["to"] == [calm]]
    assert len(left) == (0 if for_good else 1)
    assert _failed(world) == ["recipients", "no_side_effects"]


@pytest.mark.parametrize("body", [
    lambda ids: "\n".join(f"{i}.pdf" for i in ids[1:]) + "\nRegards",  # one missing
    lambda ids: "\n".join(f"{i}.pdf" for i in ids) + "\nAlso BILL-0000000.pdf and {old}.pdf",  # an old one
    lambda ids: "\n".join(f"X{i}.pdf" for i in ids),  # not whole tokens
], ids=["missing", "old", "not_tokens"])
def test_wrong_invoice_list_fails_email_content(world: World, body: Callable[[list[str]], str]) -> None:
    old = world.read_truth()["existing"][INVOICES][0][0]
    _solve(world, body=lambda ids: body(ids).replace("{old}", old))
    assert _failed(world) == ["email_content"]


@pytest.mark.slow
@pytest.mark.parametrize("invented", [
    "INV-1999-01234", "QQQ-000123", "SI0000123", "BILL-0000123", "199901-0123",  # none exists, one per format
    "{old}",  # an old row's invoice, none of the PDFs'
    "{other}",  # another manager's outstanding PDF invoice
    "{paid}",  # a PDF invoice paid in full
], ids=["inv", "abc", "si", "bill", "dated", "old", "other", "paid"])
def test_an_invented_invoice_in_a_notice_fails_email_content(world: World, invented: str) -> None:
    mail = _answer(world)[MAIL]
    known = {e["INVOICE_ID"] for e in _answer(world)[NEW_INVOICES]} | {
        values[0] for values in world.read_truth()["existing"][INVOICES]}
    assert "{" in invented or invented not in known
    paid = next(e["INVOICE_ID"] for e in _answer(world)[NEW_PAYMENTS] if e["OUTSTANDING_FLAG"] == 0)
    named = invented.format(old=_old_id(world), other=mail[1]["ids"][0], paid=paid)
    assert named not in mail[0]["ids"]
    _solve(world, body=lambda ids: _file_names(ids) + (f"\nand {named}.pdf" if ids == mail[0]["ids"] else ""))
    assert _failed(world) == ["email_content"]


def test_wrong_subject_fails_email_content(world: World) -> None:
    _solve(world, subject="process outstanding invoices")
    assert _failed(world) == ["email_content"]


def _delete_request(world: World) -> None:
    [request] = _call(world, "email_get_emails")["emails"]
    _call(world, "email_delete_email", email_id=request["id"])


def _move_a_pdf(world: World) -> None:
    first = sorted(path.name for path in (world.workspace / FILES).iterdir())[0]
    _call(world, "filesystem_create_directory", path="done")
    _call(world, "filesystem_move_file", source=f"{FILES}/{first}", destination=f"done/{first}")


@pytest.mark.slow
@pytest.mark.parametrize("act", [
    _delete_request,
    _move_a_pdf,
    lambda w: _call(w, "terminal_run_command", command=f"mv {FILES} invoices"),
    lambda w: _call(w, "terminal_run_command", command=f"echo checked >> {CREDENTIALS_FILE}"),
    lambda w: _call(w, "terminal_run_command",
                    command=f"rm {FILES}/{sorted(p.name for p in (w.workspace / FILES).iterdir())[-1]}"),
], ids=["request_deleted", "pdf_moved", "folder_renamed", "file_appended", "pdf_deleted"])
def test_a_changed_mailbox_or_workspace_fails_no_side_effects(world: World, act: Callable[[World], Any]) -> None:
    _solve(world)
    act(world)
    assert _failed(world) == ["no_side_effects"]
