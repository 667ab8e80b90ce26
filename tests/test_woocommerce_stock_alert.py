"""woocommerce_stock_alert: every world holds the task's edge cases at every size; "low on stock"
means what the instruction says; the checker accepts every correct reading of the instruction
and rejects wrong answers, each by the check aimed at it. (Oracle, mutants and lengths at every
tier: the generic acceptance suite.)"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from checkers.verdict import Verdict
from envs.core.registry import get_task
from envs.woocommerce_stock_alert import (
    ALERT,
    ALERT_HEADERS,
    ALERT_TAB,
    DEFAULT_PAGE,
    MAIL,
    ROWS,
    SPREADSHEET,
    SUPPLIERS_TAB,
    TEMPLATE_FILE,
    StockItem,
    alert_rows,
    is_low,
)
from generators.woocommerce_stock_alert import plan_of
from generators.woocommerce_stock_alert.plan import (
    AT_THRESHOLD,
    BRANDS,
    CATEGORIES,
    LOW,
    NO_THRESHOLD,
    RESTOCKED,
    STYLES,
    UNMANAGED,
    Catalog,
    problems,
)
from loca.core.credentials import parse_credentials
from loca.core.outputs import fill
from loca.core.world import World
from loca.validate import play_script
from mock_servers.gateway import Gateway
from tests.harness import task_call, world_copy
from tests.top_of_scale import oracle_calls, top_world

TASK = get_task("woocommerce_stock_alert")


@pytest.mark.parametrize("num_low", [3, 4, 7, 30, 120, 260])
@pytest.mark.parametrize("seed", range(3))
def test_every_world_holds_its_edge_cases(num_low: int, seed: int) -> None:
    plan = plan_of({"num_low": num_low}, seed)
    assert problems(plan) == []
    kinds = [p.kind for p in plan.products]
    assert kinds.count(LOW) == num_low == len(plan.expected_rows())
    assert {AT_THRESHOLD, UNMANAGED, NO_THRESHOLD} <= set(kinds)
    assert 1 <= kinds.count(RESTOCKED) == len(plan.stale) <= 3
    assert len(plan.sheet_rows) == len(plan.stale) + 1
    stale = {r["SKU"]: r for r in plan.sheet_rows if r["SKU"] in plan.stale}
    products = {p.sku: p for p in plan.products}
    assert all(r["Current Stock"] < r["Safety Threshold"] <= (products[sku].stock or 0) for sku, r in stale.items())
    assert [r for r in plan.sheet_rows if r["SKU"] == plan.kept] == [
        r for r in plan.expected_rows() if r["SKU"] == plan.kept], "the pre-filled row is still right"
    assert len(plan.products) > DEFAULT_PAGE


def test_the_fine_count_moves_no_edge_case() -> None:
    few, many = plan_of({"num_low": 9, "num_normal": 5}, 2), plan_of({"num_low": 9, "num_normal": 60}, 2)
    assert few.suppliers == many.suppliers and few.stale == many.stale and few.kept == many.kept

    def edges(plan: Any) -> list[tuple[str, str, int | None, dict[str, Any]]]:
        return sorted((p.kind, p.sku, p.stock, p.meta) for p in plan.products if p.kind != "normal")

    assert edges(few) == edges(many)
    assert len(many.products) - len(few.products) == 55


def test_worlds_follow_the_seed() -> None:
    assert plan_of({"num_low": 12}, 5).expected_rows() == plan_of({"num_low": 12}, 5).expected_rows()
    assert plan_of({"num_low": 12}, 5).expected_rows() != plan_of({"num_low": 12}, 6).expected_rows()


def _item(stock: int | None, meta: dict[str, Any], manage_stock: bool = True) -> StockItem:
    return StockItem(1, "Lamp", "ELC-10000", manage_stock, stock, meta)


def test_low_on_stock_as_the_instruction_defines_it() -> None:
    assert not is_low(_item(10, {"stock_threshold": 10}))  # at the threshold
    assert is_low(_item(10, {"stock_threshold": 10}), or_equal=True)
    assert is_low(_item(9, {"stock_threshold": 10})) and is_low(_item(0, {"stock_threshold": 1}))
    assert is_low(_item(3, {"stock_threshold": "10"}))  # a threshold stored as text
    assert not is_low(_item(None, {"stock_threshold": 10}, manage_stock=False))
    assert not is_low(_item(0, {}))  # no threshold
    rows = alert_rows([StockItem(2, "B", "KIT-20000", True, 1, {"stock_threshold": 5, "supplier_name": "X",
                                                                    "supplier_id": 1001}),
                       StockItem(1, "A", "ELC-30000", True, 0, {"stock_threshold": 5, "supplier_name": "X",
                                                                    "supplier_id": 1002})],
                      {1001: "a@x.com", 1002: "b@x.com"})
    assert [r["SKU"] for r in rows] == ["ELC-30000", "KIT-20000"] and rows[0]["Supplier Contact"] == "b@x.com"


# ---------------------------------------------------------------- the checker

@pytest.fixture(scope="module")
def blank(tmp_path_factory: pytest.TempPathFactory) -> World:
    return TASK.generate(tmp_path_factory.mktemp("blank") / "w", {"num_low": 5}, 1)


@pytest.fixture
def world(blank: World, tmp_path: Path) -> World:
    return world_copy(blank, tmp_path / "w")


class Session:
    """Several calls through one gateway (the mailbox stays logged in)."""

    def __init__(self, world: World) -> None:
        self.gateway = Gateway(world, TASK.spec.servers)

    def __call__(self, tool: str, **args: Any) -> Any:
        import json

        outcome = asyncio.run(self.gateway.call(tool, args))
        assert not outcome.is_error, outcome.text
        try:
            return json.loads(outcome.text)
        except json.JSONDecodeError:
            return outcome.text


@pytest.fixture
def session(world: World) -> Iterator[Session]:
    opened = Session(world)
    text = opened("filesystem_read_text_file", path="admin_credentials.txt")
    address, password = parse_credentials(text)
    opened("email_login", email=address, password=password)
    yield opened
    opened.gateway.close()


def _answer(world: World) -> dict[str, Any]:
    answer: dict[str, Any] = world.read_truth()["answer"]
    return answer


def _write_rows(session: Session, world: World, rows: list[list[Any]], header: list[Any] | None = None) -> None:
    book = _answer(world)[SPREADSHEET]
    session("google_sheet_clear_range", spreadsheet_id=book, sheet=ALERT_TAB, range="A2:H")
    if rows:
        session("google_sheet_update_cells", spreadsheet_id=book, sheet=ALERT_TAB, range=f"A2:H{len(rows) + 1}",
                data=rows)
    if header is not None:
        session("google_sheet_update_cells", spreadsheet_id=book, sheet=ALERT_TAB, range="A1:H1", data=[header])


def _cells(world: World) -> list[list[Any]]:
    return [[row[h] for h in ALERT_HEADERS] for row in _answer(world)[ROWS]]


Entry = dict[str, Any]
Body = Callable[[Entry, World], str]


def _template(world: World) -> tuple[str, str]:
    assert ALERT.template is not None
    return ALERT.template.parts((world.workspace / TEMPLATE_FILE).read_text())


def _subject(entry: Entry, world: World) -> str:
    return fill(_template(world)[0], entry["fill"])


def _body(entry: Entry, world: World) -> str:
    return fill(_template(world)[1], entry["fill"])


def _send(session: Session, world: World, entries: list[Entry] | None = None, body: Body = _body,
          subject: Callable[[Entry, World], str] = _subject, **extra: Any) -> None:
    for entry in _answer(world)[MAIL] if entries is None else entries:
        session("email_send_email", to=entry["to"], subject=subject(entry, world), body=body(entry, world), **extra)


def _solve(session: Session, world: World, **send: Any) -> None:
    _write_rows(session, world, _cells(world))
    _send(session, world, **send)


def _verdict(world: World) -> Verdict:
    verdict = TASK.check(world)
    assert not verdict.errored, verdict
    return verdict


def _failed(world: World) -> list[str]:
    return _verdict(world).failed_names()


def _detail(world: World, check: str) -> str:
    return next(c.detail for c in _verdict(world).checks if c.name == check)


def test_noop_fails_row_set(world: World) -> None:
    # the tab as generated (stale rows, not by SKU); no alert sent: `sent_set` misses every one
    # and `email_content` has nothing to judge
    assert asyncio.run(play_script(TASK, world, "noop")).failed_names() == [
        "row_set", "order", "sent_set", "email_content"]


def test_oracle_passes_and_fills_every_placeholder(world: World) -> None:
    assert asyncio.run(play_script(TASK, world, "oracle")).failed_names() == []
    assert ALERT.template is not None
    template = (world.workspace / TEMPLATE_FILE).read_text()
    entry = _answer(world)[MAIL][0]
    assert set(ALERT.template.placeholders(template)) == set(entry["fill"])
    subject, body = (fill(part, {k: "x" for k in entry["fill"]}) for part in ALERT.template.parts(template))
    assert "{" not in subject + body and subject == "[Stock Alert] x Stock Below Safety Threshold"
    assert body.startswith("Dear ") and "**Body:**" not in body


def _markup(entry: Entry, world: World, html: bool) -> str:
    """The filled body rendered as HTML (paragraphs, a list, the link as a link) or as Markdown
    (bold labels, runs of spaces), its prose in capitals, every value as filled."""
    link = entry["fill"]["{sheet_link}"]
    blocks = []
    for block in _body(entry, world).split("\n\n"):
        lines = block.splitlines()
        if all(line.startswith("- ") for line in lines):
            items = [line[2:].partition(": ") for line in lines]
            blocks.append("<ul>" + "".join(f"<li>{k.upper()}: <b>{v}</b></li>" for k, _, v in items) + "</ul>"
                          if html else "\n".join(f"*   **{k}:**   {v}" for k, _, v in items))
        else:
            text = "\n".join(lines).replace("Please contact", "PLEASE CONTACT").replace("Dear", "dear")
            blocks.append(f"<p>{text.replace(link, f'<a href={link!r}>{link}</a>')}</p>" if html else text)
    return "".join(blocks) if html else "\n\n\n".join(blocks)


def test_checker_accepts_other_correct_readings(session: Session, world: World) -> None:
    """Rows with numbers as text, padded names and the contact in capitals, below the header
    written again; alerts to `Name <ADDRESS>`, subjects spaced, the filled template as HTML (the
    prose in other case, the values in bold, the link as a link) or as Markdown."""
    cells = [[str(v) if isinstance(v, int) else f" {v} " for v in row] for row in _cells(world)]
    cells = [[*row[:7], row[7].upper()] for row in cells]  # numbers as text, padded names, contact in capitals
    _write_rows(session, world, [*cells, ["", "", "", "", "", "", "", ""]], header=list(ALERT_HEADERS))
    for n, entry in enumerate(_answer(world)[MAIL]):
        html = {"html_body": _markup(entry, world, True), "body": "(HTML message)"} if n % 2 else {
            "body": _markup(entry, world, False)}
        session("email_send_email", to=f"Purchasing Manager <{entry['to'].upper()}>",
                subject=f" {_subject(entry, world).replace(' ', '  ')} ", **html)
    (world.workspace / "alerts.py").write_text("# scratch\n")
    assert _failed(world) == []


def test_a_stray_row_at_the_end_of_the_grid_passes_once_cleared(session: Session, world: World) -> None:
    book = _answer(world)[SPREADSHEET]
    session("google_sheet_update_cells", spreadsheet_id=book, sheet=ALERT_TAB, range="A1000:B1000",
            data=[["x", "y"]])  # the grid's last row
    _solve(session, world)
    assert _failed(world) == []


def _changed(rows: list[list[Any]], change: str, world: World) -> list[list[Any]]:
    rows = [list(r) for r in rows]
    if change == "missing":
        del rows[0]
    elif change == "duplicate":
        rows.append(rows[0])
    elif change == "stale":
        stale = world.read_truth()["stale"][0]
        rows.append([9999, "Old row", stale, 1, 5, "X", 1001, "x@example.com"])
    elif change == "stock":
        rows[0][3] += 1
    elif change == "contact":
        rows[0][7] = "someone@example.com"
    elif change == "supplier_id":
        rows[1][6] += 1
    elif change == "order":
        rows[0], rows[1] = rows[1], rows[0]
    return rows


@pytest.mark.parametrize(("change", "check"), [("missing", "row_set"), ("duplicate", "row_set"), ("stale", "row_set"),
                                               ("stock", "row_values"), ("contact", "row_values"),
                                               ("supplier_id", "row_values"), ("order", "order")])
def test_checker_rejects_a_wrong_tab(session: Session, world: World, change: str, check: str) -> None:
    _write_rows(session, world, _changed(_cells(world), change, world))
    _send(session, world)
    failed = _failed(world)
    assert check in failed and not {"no_side_effects", "sent_set", "email_content"} & set(failed)


def test_a_renamed_header_fails_header(session: Session, world: World) -> None:
    _write_rows(session, world, _cells(world), header=[*ALERT_HEADERS[:3], "Stock", *ALERT_HEADERS[4:]])
    _send(session, world)
    assert _failed(world) == ["header"]


def test_mail_to_anyone_else_or_not_one_per_product_fails_sent_set(session: Session, world: World) -> None:
    _write_rows(session, world, _cells(world))
    entries = _answer(world)[MAIL]
    _send(session, world, entries[1:])
    assert _failed(world) == ["sent_set"]  # one product without its alert
    _send(session, world, entries[:1])
    assert _failed(world) == []
    _send(session, world, entries[:1])
    assert _failed(world) == ["sent_set"]  # two alerts for one product


def test_an_alert_to_the_supplier_too_fails_sent_set(session: Session, world: World) -> None:
    _solve(session, world)
    first = _answer(world)[MAIL][0]
    session("email_send_email", to=first["fill"]["{supplier_contact}"], subject=_subject(first, world),
            body=_body(first, world))
    assert _failed(world) == ["sent_set"]


def test_a_copy_to_someone_fails_sent_set(session: Session, world: World) -> None:
    _solve(session, world, cc="admin@example.com")
    assert _failed(world) == ["sent_set"]


def _sent_copy(session: Session, to: str) -> str:
    found = session("email_get_emails", folder="Sent", page_size=50)["emails"]
    return str(next(m["id"] for m in found if to in m["to"]))


@pytest.mark.parametrize("cover", ["delete", "archive"])
def test_mailing_the_supplier_and_hiding_the_sent_copy_still_fails(session: Session, world: World,
                                                                   cover: str) -> None:
    """An alert also mailed to the supplier is still sent when its Sent copy is deleted for good
    or archived: `sent_set` sees it, and hiding the copy is a change of its own."""
    _solve(session, world)
    first = _answer(world)[MAIL][0]
    supplier = first["fill"]["{supplier_contact}"]
    session("email_send_email", to=supplier, subject=_subject(first, world), body=_body(first, world))
    copy = _sent_copy(session, supplier)
    if cover == "delete":
        session("email_delete_email", email_id=copy)
        session("email_delete_email", email_id=copy)  # from Trash: gone for good
    else:
        session("email_move_email", email_id=copy, target_folder="Archive")
    assert _failed(world) == ["sent_set", "no_side_effects"]


def test_right_alerts_whose_sent_copies_were_archived_are_sent(session: Session, world: World) -> None:
    """Moving the Sent copies hides nothing: every alert still counts as sent, and the move is
    reported as a side effect, not as missing mail."""
    _solve(session, world)
    for copy in session("email_get_emails", folder="Sent", page_size=50)["emails"][:2]:
        session("email_move_email", email_id=str(copy["id"]), target_folder="Archive")
    assert _failed(world) == ["no_side_effects"]


def _other_sku(entry: Entry, w: World) -> str:
    return str(next(e["ids"][0] for e in _answer(w)[MAIL] if e["ids"] != entry["ids"]))


def _refilled(entry: Entry, w: World, **values: str) -> str:
    return fill(_template(w)[1], {**entry["fill"], **{f"{{{k}}}": v for k, v in values.items()}})


WRONG_BODIES: dict[str, Body] = {
    "placeholder": lambda e, w: _body(e, w) + "\nRegards, {sender_name}",  # a placeholder the answer has none for
    "unfilled": lambda e, w: fill(_template(w)[1], {k: v for k, v in e["fill"].items() if k != "{sheet_link}"}),
    "no_link": lambda e, w: _body(e, w).replace(_answer(w)[SPREADSHEET], ""),
    "contact": lambda e, w: _refilled(e, w, supplier_contact="sales@elsewhere.com"),
    "threshold": lambda e, w: _refilled(e, w, safety_threshold="unknown"),
    "swapped_numbers": lambda e, w: _refilled(e, w, current_stock=e["fill"]["{safety_threshold}"],
                                              safety_threshold=e["fill"]["{current_stock}"]),
    "swapped_names": lambda e, w: _refilled(e, w, product_name=e["fill"]["{supplier_name}"],
                                            supplier_name=e["fill"]["{product_name}"]),
    "longer_name": lambda e, w: _refilled(e, w, product_name=f"{e['fill']['{product_name}']} (Blue)"),
    "other_sku": lambda e, w: _refilled(e, w, sku=_other_sku(e, w)),
    "extra_sentence": lambda e, w: _body(e, w).replace("order.", "order. The supplier has been slow lately."),
    "sentence_dropped": lambda e, w: _body(e, w).replace("Please contact the supplier and arrange a replenishment "
                                                         "order. ", ""),
    "signature_dropped": lambda e, w: _body(e, w).partition("Best regards")[0],
    "values_only": lambda e, w: (f"{e['fill']['{product_name}']} ({e['fill']['{sku}']}): "
                                 f"{e['fill']['{current_stock}']} of {e['fill']['{safety_threshold}']}; "
                                 f"{e['fill']['{supplier_name}']} <{e['fill']['{supplier_contact}']}>; "
                                 f"{e['fill']['{sheet_link}']}"),
}


@pytest.mark.parametrize("wrong", list(WRONG_BODIES))
def test_checker_rejects_a_wrong_alert(session: Session, world: World, wrong: str) -> None:
    first = _answer(world)[MAIL][0]
    _solve(session, world, body=lambda e, w: WRONG_BODIES[wrong](e, w) if e == first else _body(e, w))
    assert _failed(world) == ["email_content"]


def test_another_products_sku_named_fails_email_content(session: Session, world: World) -> None:
    """The plain body is the filled template, the HTML part names a neighbour's SKU too: the
    template matches, the SKU it should not name does not."""
    entries = _answer(world)[MAIL]
    _write_rows(session, world, _cells(world))
    _send(session, world, entries[1:])
    first = entries[0]
    session("email_send_email", to=first["to"], subject=_subject(first, world), body=_body(first, world),
            html_body=f"<p>{_body(first, world)}</p><p>Same supplier as {_other_sku(first, world)}.</p>")
    assert _failed(world) == ["email_content"]
    assert f"names ['{_other_sku(first, world)}'] it should not" in _detail(world, "email_content")


def test_a_wrong_subject_goes_with_no_alert_and_fails_sent_set(session: Session, world: World) -> None:
    # alerts to one manager are told apart by subject: a wrong one leaves its product without an
    # alert, so `sent_set` names it (and `email_content` judges the others, which are right)
    first = _answer(world)[MAIL][0]
    _solve(session, world, subject=lambda e, w: _subject(e, w).replace("[Stock Alert] ", "")
           if e == first else _subject(e, w))
    assert _failed(world) == ["sent_set"]
    assert "messages that go with no expected one" in _detail(world, "sent_set")


def test_every_subject_wrong_leaves_nothing_to_judge(session: Session, world: World) -> None:
    _solve(session, world, subject=lambda e, w: _subject(e, w).lower())
    assert _failed(world) == ["sent_set", "email_content"]


def test_a_changed_product_or_supplier_cell_fails_no_side_effects(session: Session, world: World) -> None:
    _solve(session, world)
    assert _failed(world) == []
    book = _answer(world)[SPREADSHEET]
    session("google_sheet_update_cells", spreadsheet_id=book, sheet=SUPPLIERS_TAB, range="B2", data=[["Renamed"]])
    assert _failed(world) == ["no_side_effects"]


def test_a_product_update_fails_no_side_effects(session: Session, world: World) -> None:
    _solve(session, world)
    product = _answer(world)[ROWS][0]["Product ID"]
    session("woocommerce_woo_products_update", productId=product, productData={"stock_quantity": 500})
    assert _failed(world) == ["no_side_effects"]


@pytest.mark.parametrize("extra", ["tab", "spreadsheet"])
def test_a_new_tab_or_spreadsheet_fails_no_side_effects(session: Session, world: World, extra: str) -> None:
    _solve(session, world)
    if extra == "tab":
        session("google_sheet_create_sheet", spreadsheet_id=_answer(world)[SPREADSHEET], title="Notes")
    else:
        session("google_sheet_create_spreadsheet", title="Stock Alert scratch")
    assert _failed(world) == ["no_side_effects"]


def test_the_first_page_of_the_default_listing_misses_a_low_product(blank: World) -> None:
    page = task_call(blank, TASK, "woocommerce_woo_products_list")
    assert page["totalPages"] > 1 and len(page["items"]) == DEFAULT_PAGE
    first = {p["sku"] for p in page["items"]}
    assert {r["SKU"] for r in _answer(blank)[ROWS]} - first


def test_expected_rows_hold_the_edge_cases(blank: World) -> None:
    rows = _answer(blank)[ROWS]
    assert [r["SKU"] for r in rows] == sorted(r["SKU"] for r in rows)
    assert any(r["Current Stock"] == 0 for r in rows)
    assert any(r["Current Stock"] == r["Safety Threshold"] - 1 for r in rows)
    by_name: dict[str, set[str]] = {}
    for r in rows:
        by_name.setdefault(r["Supplier Name"], set()).add(r["Supplier Contact"])
    assert any(len(contacts) == 2 for contacts in by_name.values()), "twin suppliers both supply a low product"
    assert [r["Product ID"] for r in rows] != sorted(r["Product ID"] for r in rows)


@pytest.mark.parametrize("seed", range(5))
def test_the_largest_world_holds_its_edge_cases(seed: int) -> None:
    num_low = TASK.spec.scale.hi
    plan = plan_of({"num_low": num_low, "num_normal": 9_500}, seed)  # a world of about 2.3M tokens
    assert problems(plan) == []
    kinds = [p.kind for p in plan.products]
    assert kinds.count(LOW) == num_low == len(plan.expected_rows())
    assert len({p.name for p in plan.products}) == len({p.sku for p in plan.products}) == len(plan.products)
    assert 1 <= len(plan.stale) <= 3 and plan.kept


def test_a_category_out_of_names_is_a_clear_error() -> None:
    catalog = Catalog(random.Random(0))
    with pytest.raises(ValueError, match="no unused product name left in"):
        for _ in range(len(BRANDS) * len(STYLES) * sum(len(nouns) for _, nouns in CATEGORIES.values()) + 1):
            catalog.draw()


@pytest.mark.slow
def test_the_oracle_solves_a_world_of_2m_tokens_within_the_tool_call_limit(tmp_path: Path) -> None:
    """At the top of the scale, with the normal products of a world of about 2.3M tokens, the oracle
    (reads and one mail per low product) stays well within the agent loop's 500 tool calls."""
    params = {"num_low": TASK.spec.scale.hi, "num_normal": 9_500}
    world = top_world(TASK, params, tmp_path / "w")
    assert (world.meta.env_description_tokens or 0) > 2_250_000
    calls, failed = oracle_calls(TASK, world)
    assert calls <= 470 and failed == []
