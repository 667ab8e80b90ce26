"""filter_low_selling_products: the plan holds every edge case at every size, with the
pagination trap; the store, read through the tools, says what the plan says; the checker accepts
every correct reading of the instruction and refuses wrong answers, one test per rule. (Oracle,
mutants and lengths at every tier: the generic acceptance suite.)"""

from __future__ import annotations

import asyncio
import csv
import io
import json
import random
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from envs.core.registry import get_task
from envs.filter_low_selling_products import (
    CLEARANCE,
    CREDENTIALS_FILE,
    EXAMPLE_ROW,
    MAIL,
    MOVED,
    NEWSLETTER,
    OUTLET,
    PLACEHOLDER,
    PRICE,
    PRODUCT,
    PROMO,
    RATIO,
    REPORT,
    SALES_KEY,
    STORE_FILE,
    SUBSCRIBERS_FILE,
    TEMPLATE_FILE,
    TRAP_PAGE,
)
from generators.common import PersonNames, seeded_faker
from generators.filter_low_selling_products import plan as plan_module
from generators.filter_low_selling_products.plan import (
    AGE_90,
    MATERIALS,
    MIN_NORMAL,
    NEAR_MISSES,
    NOW,
    SECTIONS,
    STREAMS,
    STYLES,
    Plan,
    _Catalog,
    default_normal,
    missing_edge_cases,
    plan_world,
    subscriber_counts,
)
from loca.core.credentials import parse_credentials
from loca.core.outputs import csv_text, fill
from loca.core.rng import WorldRng
from loca.core.world import World
from loca.validate import play_script
from mock_servers.gateway import Gateway
from tests.harness import task_call, world_copy
from tests.top_of_scale import oracle_calls, top_world

TASK = get_task("filter_low_selling_products")
STORE = ("Test Home", "testhome.shop")


def _plan(n: int, seed: int, normal: int | None = None) -> Plan:
    rngs = WorldRng(TASK.name, seed)
    names = PersonNames(seeded_faker(rngs.stream("faker_people")), rngs.stream("names"))
    return plan_world({name: rngs.stream(name) for name in STREAMS}, names, n,
                      default_normal(n) if normal is None else normal, STORE)


@pytest.mark.parametrize("n", [4, 5, 7, 16, 36, 113, 306, 700])
@pytest.mark.parametrize("seed", range(5))
def test_plan_has_every_edge_case(n: int, seed: int) -> None:
    plan = _plan(n, seed)
    assert missing_edge_cases(plan) == []
    assert len(plan.to_move) == n
    assert len(plan.products) == n + len(NEAR_MISSES) + default_normal(n)
    subscribed, unsubscribed = subscriber_counts(n)
    listed = plan.subscribers
    assert [p.subscribed for p in listed].count(True) == subscribed == max(10, round(0.75 * n + 1e-9))
    assert [p.subscribed for p in listed].count(False) == unsubscribed >= 1
    assert 5 <= len(plan.categories) <= 10 and CLEARANCE in plan.categories


def test_near_lines_are_whole_days_and_the_first_page_holds_nothing_to_move() -> None:
    plan = _plan(7, 2)
    near = {p.role: p for p in plan.products if p.role in NEAR_MISSES}
    assert near[AGE_90].age_days == 90 and not near[AGE_90].to_move
    assert [p for p in plan.to_move if p.age_days == 91]
    assert not [p for p in plan.default_listing()[:TRAP_PAGE] if p.to_move]


def test_same_seed_same_plan_and_the_fine_count_moves_nothing_that_decides() -> None:
    assert _plan(20, 3) == _plan(20, 3)
    assert _plan(20, 4).to_move != _plan(20, 3).to_move
    few, many = _plan(20, 3, MIN_NORMAL), _plan(20, 3, 90)
    assert few.to_move == many.to_move and few.subscribers == many.subscribers
    near = [sorted((p for p in plan.products if p.role in NEAR_MISSES), key=lambda p: p.sku) for plan in (few, many)]
    assert near[0] == near[1]


# ------------------------------------------------------------------ a generated world

def _call(world: World, name: str, **args: Any) -> Any:
    return task_call(world, TASK, name, **args)


def _login(world: World) -> None:
    address, password = parse_credentials(_call(world, "filesystem_read_text_file", path=CREDENTIALS_FILE))
    _call(world, "email_login", email=address, password=password)


def _products(world: World) -> list[dict[str, Any]]:
    first = _call(world, "woocommerce_woo_products_list", perPage=100)
    items = list(first["items"])
    for page in range(2, first["totalPages"] + 1):
        items += _call(world, "woocommerce_woo_products_list", perPage=100, page=page)["items"]
    return items


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> World:
    return TASK.generate(tmp_path_factory.mktemp("flsp") / "w", {"num_low": 9}, 3)


@pytest.fixture
def world(base: World, tmp_path: Path) -> World:
    return world_copy(base, tmp_path / "w")


def test_the_store_read_through_the_tools_says_what_the_truth_says(world: World) -> None:
    gateway = Gateway(world, TASK.spec.servers)
    try:
        outcome = asyncio.run(gateway.call("email_send_email", {"to": "a@b.org", "subject": "s", "body": "b"}))
    finally:
        gateway.close()
    assert outcome.is_error and outcome.text.startswith("Error [UNAUTHENTICATED]")
    products = _products(world)
    assert all(p["date_created"] == p["date_created_gmt"] and p["stock_status"] == "instock" for p in products)
    now = datetime(2025, 10, 1, tzinfo=UTC)

    def age(p: dict[str, Any]) -> timedelta:
        return now - datetime.fromisoformat(p["date_created_gmt"]).replace(tzinfo=UTC)

    sales = {p["id"]: next(m["value"] for m in p["meta_data"] if m["key"] == SALES_KEY) for p in products}
    moved = sorted(p["id"] for p in products
                   if p["status"] == "publish" and age(p) >= timedelta(days=91) and sales[p["id"]] < 10)
    assert moved == world.read_truth()["answer"][MOVED]
    assert {age(p) for p in products if timedelta(days=88) <= age(p) < timedelta(days=94)} == {
        timedelta(days=90), timedelta(days=91)}
    by_lifetime = sorted(p["id"] for p in products if p["status"] == "publish" and age(p) >= timedelta(days=91)
                         and p["total_sales"] < 10)
    assert by_lifetime != moved
    listed = json.loads((world.workspace / SUBSCRIBERS_FILE).read_text())["subscriber_list"]
    assert {e["subscribed"] for e in listed} == {True, False}
    subject, body = _template(world)
    assert subject == (world.workspace / TEMPLATE_FILE).read_text().splitlines()[0] and PLACEHOLDER not in subject
    assert PLACEHOLDER in body and {e["to"] for e in _answer(world)[MAIL]} == {
        e["email"] for e in listed if e["subscribed"]}
    assert all(e["fill"] == {PLACEHOLDER: next(x["name"] for x in listed if x["email"] == e["to"])}
               for e in _answer(world)[MAIL])
    assert (world.workspace / REPORT.file).read_text() == csv_text(REPORT.headers, [EXAMPLE_ROW])


def test_oracle_passes_and_noop_fails(world: World, tmp_path: Path) -> None:
    other = world_copy(world, tmp_path / "noop")
    assert asyncio.run(play_script(TASK, world, "oracle")).passed
    # no newsletter sent: `email_content` has nothing to judge
    assert asyncio.run(play_script(TASK, other, "noop")).failed_names() == ["category", "membership", "csv",
                                                                          "recipients", "email_content"]


# ------------------------------------------------------------------ the checker, on hand-made answers

def _failed(world: World) -> list[str]:
    verdict = TASK.check(world)
    assert not verdict.errored, verdict
    return verdict.failed_names()


def _answer(world: World) -> dict[str, Any]:
    answer: dict[str, Any] = world.read_truth()["answer"]
    return answer


def _category_ids(world: World) -> dict[str, int]:
    return {c["name"]: c["id"] for c in _call(world, "woocommerce_woo_products_categories_list", perPage=100)["items"]}


def _move(world: World, ids: list[int] | None = None, parent: str | None = None,
          keep: Callable[[dict[str, Any]], list[int]] | None = None) -> int:
    """Create the category (under `parent` when given) and move the products (the right ones by
    default); `keep(product)` adds category ids to each."""
    data: dict[str, Any] = {"name": OUTLET}
    if parent:
        data["parent"] = _category_ids(world)[parent]
    outlet = int(_call(world, "woocommerce_woo_products_categories_create", categoryData=data)["id"])
    for pid in _answer(world)[MOVED] if ids is None else ids:
        extra = keep(_call(world, "woocommerce_woo_products_get", productId=pid)) if keep else []
        _call(world, "woocommerce_woo_products_update", productId=pid,
              productData={"categories": [{"id": c} for c in [outlet, *extra]]})
    return outlet


def _rows(world: World) -> list[list[str]]:
    return [[row[h] for h in REPORT.headers] for row in _answer(world)[REPORT.file]]


def _write(world: World, text: str | bytes) -> None:
    data = text.encode() if isinstance(text, str) else text
    (world.workspace / REPORT.file).write_bytes(data)


Entry = dict[str, Any]


def _template(world: World) -> tuple[str, str]:
    assert NEWSLETTER.template is not None
    return NEWSLETTER.template.parts((world.workspace / TEMPLATE_FILE).read_text())


def _name(e: Entry) -> str:
    return str(e["fill"][PLACEHOLDER])


def _subject(w: World, e: Entry) -> str:
    return fill(_template(w)[0], e["fill"])


def _body(w: World, e: Entry) -> str:
    return fill(_template(w)[1], e["fill"])


def _send(world: World, attachments: list[str] | None = None, **overrides: Any) -> None:
    """One newsletter per subscriber to mail; an override that is callable is called with the
    world and the entry."""
    for e in _answer(world)[MAIL]:
        args = {"to": e["to"], "subject": _subject(world, e), "body": _body(world, e),
                "attachments": [REPORT.file] if attachments is None else attachments}
        _call(world, "email_send_email", **{**args, **{k: v(world, e) if callable(v) else v
                                                        for k, v in overrides.items()}})


def _solve(world: World) -> None:
    _login(world)
    _move(world)
    _write(world, csv_text(REPORT.headers, _rows(world)))
    _send(world)


def _html(w: World, e: Entry) -> str:
    """The filled body as HTML: a style rule, a paragraph each, the name in bold, the store's
    words in capitals, entities for punctuation."""
    paragraphs = _body(w, e).replace(_name(e), "\0").replace("Prices hold", "PRICES HOLD").split("\n\n")
    shown = "".join(f"<p>{p.replace(',', '&#44;')}</p>" for p in paragraphs)
    return f"<style>p {{ color: #333; }}</style>{shown.replace(chr(0), f'<b>{_name(e)}</b>')}"


def _markdown(w: World, e: Entry) -> str:
    """The filled body as Markdown: the name in bold, the file name as code, lines re-wrapped."""
    return (_body(w, e).replace(_name(e), f"**{_name(e)}**").replace(REPORT.file, f"`{REPORT.file}`")
            .replace(". ", ".\n   ").replace("Best regards", "BEST REGARDS"))


def test_checker_accepts_documented_variants(world: World) -> None:
    """A category under `Clearance`, products moved one by one, a CSV with a BOM, CRLF, every
    cell quoted, spaces, truncated ratios and a trailing blank line; mail to display-name
    addresses with the subject spaced and the filled template as HTML (with a style rule) or as
    Markdown."""
    _login(world)
    _move(world, parent=CLEARANCE)
    buf = io.StringIO()
    writer = csv.writer(buf, quoting=csv.QUOTE_ALL, lineterminator="\r\n")
    writer.writerow(REPORT.headers)
    for name, price, promo, _ in _rows(world):
        exact = Decimal(promo) * 100 / Decimal(price)
        writer.writerow([f" {name} ", price, promo, f"{exact.quantize(Decimal('0.001'), 'ROUND_DOWN')}%"])
    _write(world, b"\xef\xbb\xbf" + (buf.getvalue() + "\r\n").encode())
    first = _answer(world)[MAIL][0]
    _send(world, to=lambda w, e: f"\"{_name(e)}\" <{e['to'].upper()}>",
          subject=lambda w, e: f"  {_subject(w, e).replace(' ', '   ')}\t",
          body=lambda w, e: "See the HTML part." if e == first else _markdown(w, e),
          html_body=lambda w, e: _html(w, e) if e == first else None)
    assert _failed(world) == []


def test_tags_and_images_written_back_unchanged_are_no_side_effects(world: World) -> None:
    _solve(world)
    for p in _products(world)[:5]:
        _call(world, "woocommerce_woo_products_update", productId=p["id"], productData={
            "tags": [{"id": t["id"]} for t in p["tags"]],
            "images": [{"src": i["src"], "name": i["name"], "alt": i["alt"]} for i in p["images"]]})
    assert _failed(world) == []


@pytest.mark.slow
def test_changed_images_or_tags_fail_products_untouched(world: World, tmp_path: Path) -> None:
    other = world_copy(world, tmp_path / "other")
    _solve(world)
    pid = _products(world)[0]["id"]
    _call(world, "woocommerce_woo_products_update", productId=pid, productData={"images": []})
    # the store's image rows go too, which only the task's own writes may touch (an image written
    # back as it was gets a new id, nothing more)
    assert _failed(world) == ["products_untouched", "no_side_effects"]
    _solve(other)
    tagged = next(p for p in _products(other) if p["tags"])
    _call(other, "woocommerce_woo_products_update", productId=tagged["id"], productData={"tags": []})
    # the product's tag links and the tags' counts change too, outside what the task writes
    assert _failed(other) == ["products_untouched", "no_side_effects"]


def test_scratch_files_and_reads_are_no_side_effects(world: World) -> None:
    _solve(world)
    (world.workspace / "notes.txt").write_text("done")
    _products(world)
    assert _failed(world) == []


# category and membership

def test_products_left_in_clearance_fail_category(world: World) -> None:
    _login(world)
    clearance = _category_ids(world)[CLEARANCE]
    for pid in _answer(world)[MOVED]:
        _call(world, "woocommerce_woo_products_update", productId=pid, productData={"categories": [{"id": clearance}]})
    assert _failed(world)[:2] == ["category", "membership"]


def test_a_second_category_of_that_name_fails_category(world: World) -> None:
    _solve(world)
    _call(world, "woocommerce_woo_products_categories_create",
          categoryData={"name": OUTLET, "parent": _category_ids(world)[CLEARANCE]})
    assert _failed(world) == ["category"]


def test_old_categories_kept_fail_membership(world: World) -> None:
    _login(world)
    _move(world, keep=lambda p: [c["id"] for c in p["categories"]])
    _write(world, csv_text(REPORT.headers, _rows(world)))
    _send(world)
    assert _failed(world) == ["membership"]


def test_a_product_missing_fails_membership(world: World) -> None:
    _login(world)
    _move(world, _answer(world)[MOVED][1:])
    _write(world, csv_text(REPORT.headers, _rows(world)))
    _send(world)
    assert _failed(world) == ["membership"]


def test_an_extra_product_fails_membership_and_products_untouched(world: World) -> None:
    _solve(world)
    extra = next(p["id"] for p in _products(world) if p["id"] not in _answer(world)[MOVED])
    outlet = _category_ids(world)[OUTLET]
    _call(world, "woocommerce_woo_products_update", productId=extra, productData={"categories": [{"id": outlet}]})
    assert _failed(world) == ["membership", "products_untouched"]


# products_untouched

@pytest.mark.slow
@pytest.mark.parametrize("change", [
    {"sale_price": ""}, {"status": "private"}, {"stock_quantity": 0}, {"meta_data": [{"key": SALES_KEY, "value": 0}]},
    {"featured": True},
])
def test_other_fields_of_a_moved_product_fail_products_untouched(world: World, change: dict[str, Any]) -> None:
    _solve(world)
    pid = next(p["id"] for p in _products(world) if p["id"] in _answer(world)[MOVED] and p["sale_price"])
    _call(world, "woocommerce_woo_products_update", productId=pid, productData=change)
    # the product's row (or its meta) changes beyond date_modified: outside what the task writes too
    assert _failed(world) == ["products_untouched", "no_side_effects"]


def test_recategorising_a_product_to_keep_fails_products_untouched(world: World) -> None:
    _solve(world)
    other = next(p for p in _products(world) if p["id"] not in _answer(world)[MOVED] and len(p["categories"]) > 1)
    _call(world, "woocommerce_woo_products_update", productId=other["id"],
          productData={"categories": [{"id": other["categories"][0]["id"]}]})
    assert _failed(world) == ["products_untouched"]


@pytest.mark.slow
def test_a_trashed_or_created_product_fails_products_untouched(world: World, tmp_path: Path) -> None:
    other = world_copy(world, tmp_path / "other")
    _solve(world)
    _call(world, "woocommerce_woo_products_delete", productId=_answer(world)[MOVED][0])
    # a product row changed or added is outside what the task writes too
    assert _failed(world) == ["products_untouched", "no_side_effects"]
    _solve(other)
    _call(other, "woocommerce_woo_products_create", productData={"name": "Outlet note"})
    assert _failed(other) == ["products_untouched", "no_side_effects"]


# csv (the file in the workspace; the attachment was right)

def _csv_case(world: World, text: str) -> list[str]:
    _solve(world)
    _write(world, text)
    return _failed(world)


def _edit(rows: list[list[str]], row: int, column: int, value: str) -> list[list[str]]:
    out = [list(r) for r in rows]
    out[row][column] = value
    return out


@pytest.mark.slow
@pytest.mark.parametrize("make", [
    lambda rows: csv_text([*REPORT.headers[:3], "Discount"], rows),  # header renamed
    lambda rows: csv_text(REPORT.headers, [EXAMPLE_ROW, *rows]),  # example row kept
    lambda rows: csv_text(REPORT.headers, rows[1:]),  # a row missing
    lambda rows: csv_text(REPORT.headers, [rows[1], rows[0], *rows[2:]]),  # two rows swapped
    lambda rows: csv_text(REPORT.headers, [*rows, rows[0]]),  # a row twice
    lambda rows: csv_text(REPORT.headers, _edit(rows, 0, 1, f"{Decimal(rows[0][1]):.1f}")),  # one decimal
    lambda rows: csv_text(REPORT.headers, _edit(rows, 1, 2, f"${rows[1][2]}")),  # a currency sign
    lambda rows: csv_text(REPORT.headers, _edit(rows, 1, 3, rows[1][3][:-2] + "%")),  # 2 decimals
    lambda rows: csv_text(REPORT.headers, _edit(rows, 1, 3, f"{Decimal(rows[1][3][:-1]) + Decimal('0.002')}%")),
    lambda rows: csv_text(REPORT.headers, _edit(rows, 1, 3, rows[1][3][:-1])),  # no % sign
    lambda rows: csv_text(REPORT.headers, _edit(rows, 1, 3, f"{Decimal(rows[1][3][:-1]) / 100:.5f}")),  # fraction
    lambda rows: csv_text([*REPORT.headers, "SKU"], [[*r, "X"] for r in rows]),  # an extra column
    lambda rows: "\n".join(",".join(r) for r in [REPORT.headers, *rows]) + "\n",  # names not quoted
])
def test_csv_rules(world: World, make: Callable[[list[list[str]]], str]) -> None:
    assert _csv_case(world, make(_rows(world))) == ["csv"]


# recipients

def _subscribers(world: World) -> list[dict[str, Any]]:
    listed: list[dict[str, Any]] = json.loads((world.workspace / SUBSCRIBERS_FILE).read_text())["subscriber_list"]
    return listed


@pytest.mark.slow
def test_unsubscribed_or_customer_recipients_fail_recipients(world: World) -> None:
    _solve(world)
    off = next(e for e in _subscribers(world) if e["subscribed"] is False)
    _call(world, "email_send_email", to=off["email"], subject=_subject(world, {"fill": {}}),
          body=fill(_template(world)[1], {PLACEHOLDER: off["name"]}), attachments=[REPORT.file])
    assert _failed(world) == ["recipients"]


@pytest.mark.slow
def test_a_missing_subscriber_or_a_second_message_fails_recipients(world: World, tmp_path: Path) -> None:
    other = world_copy(world, tmp_path / "other")
    _login(world)
    _move(world)
    _write(world, csv_text(REPORT.headers, _rows(world)))
    _send(world, to=lambda w, e: e["to"] if e != _answer(w)[MAIL][0] else _answer(w)[MAIL][1]["to"])
    # the second subscriber also gets the first one's newsletter, which names the first
    assert _failed(world) == ["recipients", "email_content"]
    _solve(other)
    first = _answer(other)[MAIL][0]
    _call(other, "email_send_email", to=first["to"], subject=_subject(other, first), body=_body(other, first),
          attachments=[REPORT.file])
    assert _failed(other) == ["recipients"]


def test_a_cc_fails_recipients(world: World) -> None:
    _login(world)
    _move(world)
    _write(world, csv_text(REPORT.headers, _rows(world)))
    _send(world, cc=world.meta.accounts["email"]["address"])
    assert _failed(world) == ["recipients"]


def _sent_copy(world: World, to: str) -> str:
    found = _call(world, "email_get_emails", folder="Sent", page_size=50)["emails"]
    return str(next(m["id"] for m in found if to in m["to"]))


@pytest.mark.slow
@pytest.mark.parametrize("cover", ["delete", "archive"])
def test_mailing_an_unsubscribed_entry_and_hiding_the_sent_copy_still_fails(world: World, cover: str) -> None:
    """A newsletter to someone who unsubscribed is still sent when its Sent copy is deleted for
    good or archived: `recipients` sees it, and hiding the copy is a change of its own."""
    _solve(world)
    off = next(e for e in _subscribers(world) if e["subscribed"] is False)
    _call(world, "email_send_email", to=off["email"], subject=_subject(world, {"fill": {}}),
          body=fill(_template(world)[1], {PLACEHOLDER: off["name"]}), attachments=[REPORT.file])
    copy = _sent_copy(world, off["email"])
    if cover == "delete":
        _call(world, "email_delete_email", email_id=copy)
        _call(world, "email_delete_email", email_id=copy)  # from Trash: gone for good
    else:
        _call(world, "email_move_email", email_id=copy, target_folder="Archive")
    assert _failed(world) == ["recipients", "no_side_effects"]


def test_right_newsletters_whose_sent_copies_were_archived_are_sent(world: World) -> None:
    """Moving the Sent copies hides nothing: every newsletter still counts as sent, and the move
    is reported as a side effect, not as missing mail."""
    _solve(world)
    for e in _answer(world)[MAIL][:2]:
        _call(world, "email_move_email", email_id=_sent_copy(world, e["to"]), target_folder="Archive")
    assert _failed(world) == ["no_side_effects"]


# email_content

def _named(w: World, e: Entry, name: str) -> str:
    return fill(_template(w)[1], {PLACEHOLDER: name})


def _swapped(w: World, e: Entry) -> str:
    """The first two subscribers' names swapped."""
    first, second = _answer(w)[MAIL][:2]
    return _named(w, e, _name(second if e == first else first if e == second else e))


@pytest.mark.slow
@pytest.mark.parametrize("overrides", [
    {"subject": lambda w, e: "Subject: new deals"},
    {"subject": lambda w, e: f"{OUTLET} news"},
    {"subject": lambda w, e: f"{_subject(w, e)} for {_name(e)}"},  # text the subject line does not have
    {"body": lambda w, e: _named(w, e, PLACEHOLDER)},  # the placeholder left
    {"body": lambda w, e: _named(w, e, f"{_name(e)} ({{{{ email }}}})")},  # another placeholder
    {"body": lambda w, e: _named(w, e, "subscriber")},
    {"body": lambda w, e: _named(w, e, _name(e).split()[0])},  # the first name only
    {"body": lambda w, e: _named(w, e, f"{_name(e)} Jr")},  # the name with a word added
    {"body": _swapped},  # two subscribers' names swapped
    {"body": lambda w, e: _body(w, e) + "\nP.S. Reply STOP to unsubscribe."},  # text the template does not have
    {"body": lambda w, e: _body(w, e).replace("Prices hold while stock lasts.", "")},  # a sentence left out
    {"body": lambda w, e: _body(w, e).partition("Best regards")[0]},  # the signature left out
    {"body": lambda w, e: f"Dear {_name(e)}, see the attachment."},  # the name, none of the template's text
    {"body": lambda w, e: "See the attachment.",  # the name alone in an HTML part that has a style rule
     "html_body": lambda w, e: f"<style>p {{ color: #333; }}</style><p>Dear <b>{_name(e)}</b>,</p>"},
])
def test_subject_name_and_placeholder_rules(world: World, overrides: dict[str, Any]) -> None:
    _login(world)
    _move(world)
    _write(world, csv_text(REPORT.headers, _rows(world)))
    _send(world, **overrides)
    assert _failed(world) == ["email_content"]


@pytest.mark.slow
@pytest.mark.parametrize("case", ["none", "two", "renamed", "example", "unsorted"])
def test_attachment_rules(world: World, case: str) -> None:
    _login(world)
    _move(world)
    rows = _rows(world)
    right = csv_text(REPORT.headers, rows)
    files = {"none": (right, []), "two": (right, [REPORT.file, TEMPLATE_FILE]), "renamed": (right, ["products.csv"]),
             "example": (csv_text(REPORT.headers, [EXAMPLE_ROW, *rows]), [REPORT.file]),
             "unsorted": (csv_text(REPORT.headers, rows[::-1]), [REPORT.file])}
    text, attached = files[case]
    _write(world, text)
    (world.workspace / "products.csv").write_text(text)
    _send(world, attachments=attached)
    _write(world, right)
    assert _failed(world) == ["email_content"]


# no_side_effects

@pytest.mark.slow
def test_subscriber_file_draft_or_category_edits_fail_no_side_effects(world: World, tmp_path: Path) -> None:
    drafted, renamed = world_copy(world, tmp_path / "drafted"), world_copy(world, tmp_path / "renamed")
    _solve(world)
    path = world.workspace / SUBSCRIBERS_FILE
    path.write_text(path.read_text().replace('"subscribed": true', '"subscribed": true, "notified": true'))
    assert _failed(world) == ["no_side_effects"]
    _solve(drafted)
    _call(drafted, "email_save_draft", subject="next week", body="more deals")
    assert _failed(drafted) == ["no_side_effects"]
    _solve(renamed)
    (renamed.workspace / TEMPLATE_FILE).write_text("Subject\nDear {name}\n")
    assert _failed(renamed) == ["no_side_effects"]


def test_the_frozen_store_holds_every_product(world: World) -> None:
    frozen = world.read_truth(STORE_FILE)["products"]
    assert sorted(int(k) for k in frozen) == sorted(p["id"] for p in _products(world))
    assert CLEARANCE in _category_ids(world) and OUTLET not in _category_ids(world)
    assert all(set(row) == {PRODUCT, PRICE, PROMO, RATIO} for row in _answer(world)[REPORT.file])


# ------------------------------------------------------------------ the largest worlds

LONGEST_NORMAL = 8_500  # ordinary products of a world of about 2.3M tokens at the top of the scale

@pytest.mark.parametrize("seed", range(5))
def test_plan_at_the_largest_scale_has_every_edge_case(seed: int) -> None:
    n, normal = TASK.spec.scale.hi, LONGEST_NORMAL
    plan = _plan(n, seed, normal)
    assert missing_edge_cases(plan) == []
    assert len(plan.to_move) == n and len(plan.products) == n + normal + len(NEAR_MISSES)
    assert len({p.name for p in plan.people}) == len(plan.people)


def test_dates_drawn_twice_never_make_a_second_tie(monkeypatch: pytest.MonkeyPatch) -> None:
    """With creation times drawn from a minute, products to move would share them; the tie
    between the two planned products stays the only one."""
    def within_a_minute(rng: random.Random, low: int, _high: int) -> datetime:
        return NOW - timedelta(days=low, seconds=rng.randrange(60))

    monkeypatch.setattr(plan_module, "_at", within_a_minute)
    plan = _plan(40, 0)
    created = [p.created for p in plan.to_move]
    assert len(set(created)) == len(created) - 1
    assert missing_edge_cases(plan) == []


def test_a_full_section_numbers_its_names() -> None:
    catalog = _Catalog(["Garden"])
    rng = random.Random(0)
    plain = len(STYLES) * len(MATERIALS) * len(SECTIONS["Garden"][1])
    names = [catalog.name(rng, "Garden")[0] for _ in range(plain + 500)]
    assert len({name.casefold() for name in names}) == len(names)
    assert " No. " not in names[0] and sum(" No. " in name for name in names) >= 500


@pytest.mark.slow
def test_the_oracle_solves_a_world_of_2m_tokens_within_the_tool_call_limit(tmp_path: Path) -> None:
    """At the top of the scale, with the ordinary products of a world of about 2.3M tokens, the oracle
    (reads and one mail per subscriber) stays well within the agent loop's 500 tool calls."""
    params = {"num_low": TASK.spec.scale.hi, "num_normal": LONGEST_NORMAL}
    world = top_world(TASK, params, tmp_path / "w")
    assert (world.meta.env_description_tokens or 0) > 2_250_000
    calls, failed = oracle_calls(TASK, world)
    assert calls <= 470 and failed == []
