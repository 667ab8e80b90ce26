"""Servers never answer wrong: a value a tool cannot represent is an argument error, and a query
or filter it cannot evaluate is an error; never a silently empty, partial or guessed answer.

One table of (server, tool, arguments, expected error) over a small world of every server, with
the inputs that were once answered wrong and the notable ones that always erred, beside a table
of inputs that must be computed (not refused, not null), including the SQL cases of the
warehouse servers."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from generators.common import create_world
from loca.core.world import World, WorldMeta
from mock_servers.canvas import toolbox as canvas_tools
from mock_servers.claim_done import toolbox as claim_tools
from mock_servers.core.db import Database
from mock_servers.email import toolbox as email_tools
from mock_servers.excel import toolbox as excel_tools
from mock_servers.filesystem import toolbox as filesystem_tools
from mock_servers.google_cloud import toolbox as bigquery_tools
from mock_servers.python_execute import toolbox as python_tools
from mock_servers.snowflake import toolbox as snowflake_tools
from mock_servers.terminal import toolbox as terminal_tools
from tests import canvas_seed, gcloud_seed, snowflake_seed
from tests.google_sheet_seed import build_sheets
from tests.harness import ServerHarness
from tests.sql_corpus_support import seeded_world
from tests.test_calendar_server import build_calendar
from tests.test_email_server import build_mail
from tests.test_excel_server import SALES
from tests.test_memory_server import build_memory
from tests.test_pdf_tools_server import build_pdfs
from tests.woocommerce_seed import build_store

INVALID = "INVALID_ARGUMENT"
CAL_WINDOW = {"timeMin": "2025-09-01T00:00:00Z", "timeMax": "2026-01-01T00:00:00Z"}
BOOK = {"filepath": "book.xlsx", "sheet_name": "Sheet1"}
PENDING = {"filepath": "pending.xlsx", "sheet_name": "Sheet1"}  # units of row 3 is a formula never calculated


def _case(server: str, tool: str, args: dict[str, Any], message: str, code: str = INVALID) -> Any:
    return pytest.param(server, tool, args, code, message, id=f"{tool}: {message[:60]}")


FIXED = [  # each of these was answered silently: empty, everything, or a guess
    _case("woocommerce", "woo_orders_list", {"dateAfter": ""},
          "parameter 'dateAfter': String should have at least 1 character"),
    _case("woocommerce", "woo_orders_list", {"dateBefore": "2025-W03"},
          "dateBefore '2025-W03' is not an ISO 8601 date or date-time"),
    _case("woocommerce", "woo_orders_list", {"dateAfter": "20250115"},
          "dateAfter '20250115' is not an ISO 8601 date or date-time"),
    _case("woocommerce", "woo_reports_sales", {"dateMin": "2025-01-15 UTC"},
          "dateMin '2025-01-15 UTC' is not a date (YYYY-MM-DD)"),
    _case("woocommerce", "woo_reports_sales", {"dateMin": "2025-01-01", "dateMax": "2025-01-15T00:00:00Z"},
          "dateMax '2025-01-15T00:00:00Z' is not a date (YYYY-MM-DD)"),
    _case("woocommerce", "woo_reports_top_sellers", {"dateMin": ""},
          "parameter 'dateMin': String should have at least 1 character"),
    _case("woocommerce", "woo_customers_list", {"email": "not-an-email"},
          "email 'not-an-email' is not an e-mail address"),
    _case("woocommerce", "woo_tax_rates_list", {"taxClass": "reduced-rate"},
          "taxClass 'reduced-rate' is not a tax class slug; classes: standard"),
    _case("woocommerce", "woo_customers_update", {"customerId": 1, "customerData": {"billing": {"email": "bad"}}},
          "parameter 'customerData.billing.email': Value error, not an e-mail address"),
    _case("woocommerce", "woo_orders_update", {"orderId": 1, "orderData": {"shipping": {"email": "a@b"}}},
          "parameter 'orderData.shipping.email': Value error, not an e-mail address"),
    _case("woocommerce", "woo_products_list", {"sku": "BOOT-1,,TEE-1"},
          "sku 'BOOT-1,,TEE-1' must be a SKU or comma-separated SKUs"),
    _case("woocommerce", "woo_coupons_update", {"couponId": 1, "couponData": {"date_expires": "2025-W20"}},
          "couponData.date_expires '2025-W20' is not an ISO 8601 date or date-time"),
    _case("woocommerce", "woo_products_list", {"category": "\u0663"}, "category '\u0663' must be an id or"),
    _case("woocommerce", "woo_products_list", {"minPrice": "\u0669\u0660"}, "minPrice '\u0669\u0660' is not a decimal"),
    _case("woocommerce", "woo_products_update", {"productId": 1, "productData": {"regular_price": "1_000"}},
          "productData.regular_price '1_000' is not a decimal amount"),
    _case("canvas", "canvas_submit_grade", {"course_id": 1, "assignment_id": 1, "user_id": 1, "grade": "\u0669\u0660"},
          "grade '\u0669\u0660' not understood"),
    _case("google_sheet", "update_cells", {"sheet": "Stock", "range": "G2", "data": [["3/15/2025"]]},
          "[0][0] '3/15/2025' would be a date or time in Sheets, and this server takes dates only as YYYY-MM-DD"),
    _case("google_sheet", "append_rows", {"sheet": "Stock", "data": [["x", "10:30 AM"]]},
          "[0][1] '10:30 AM' would be a date or time in Sheets"),
    _case("google_sheet", "update_cells", {"sheet": "Stock", "range": "G3", "data": [["March 15, 2025"]]},
          "'March 15, 2025' would be a date or time in Sheets"),
    _case("google_sheet", "batch_update_cells", {"sheet": "Stock", "ranges": {"G3": [["2025-03-15 10:00"]]}},
          "'2025-03-15 10:00' would be a date or time in Sheets"),
    _case("google_sheet", "update_cells", {"sheet": "Stock", "range": "G4", "data": [['=QUERY(A1:C5,"select A")']]},
          "[0][0] =QUERY(A1:C5,\"select A\") calls QUERY, which this server does not compute; it computes ABS,"),
    _case("google_sheet", "update_cells", {"sheet": "Stock", "range": "G5", "data": [["=SUMPRODUCT(C2:C4,D2:D4)+1"]]},
          "calls SUMPRODUCT, which this server does not compute"),
    _case("google_sheet", "update_cells", {"sheet": "Stock", "range": "G6", "data": [["={1,2}"]]},
          "={1,2} holds an array literal {...}, which this server does not compute"),
    _case("google_sheet", "update_cells", {"sheet": "Stock", "range": "G7", "data": [["=C2:C4"]]},
          "=C2:C4 returns a range, which Sheets spreads over the cells around it"),
    _case("google_sheet", "update_cells", {"sheet": "Stock", "range": "G8", "data": [['=TEXT(0.5,"h:mm")']]},
          "formats with TEXT pattern 'h:mm', which this server does not compute"),
    _case("excel", "create_pivot_table", {**PENDING, "data_range": "A1:D6", "rows": ["region"], "values": ["units"],
                                          "agg_func": "sum"},
          "'units' in row 3 of data_range is a formula with no calculated value"),
    _case("excel", "create_pivot_table", {**BOOK, "data_range": "A1:D6", "rows": ["region"], "values": ["product"],
                                          "agg_func": "max"},
          "max takes numbers, but 'product' in row 2 of data_range holds 'pen'"),
]

ALREADY_RIGHT = [  # the same rule, held before
    _case("woocommerce", "woo_orders_list", {"dateAfter": "2025-01-15 10:37:00 UTC"},
          "dateAfter '2025-01-15 10:37:00 UTC' is not an ISO 8601 date or date-time"),
    _case("woocommerce", "woo_orders_list", {"dateAfter": "2025-01-15T10:37:00 America/New_York"},
          "is not an ISO 8601 date or date-time"),
    _case("woocommerce", "woo_orders_list", {"dateAfter": "not a date"}, "dateAfter 'not a date' is not an ISO 8601"),
    _case("woocommerce", "woo_orders_list", {"status": ["shipped"]}, "parameter 'status.0': Input should be 'pending'"),
    _case("woocommerce", "woo_products_list", {"stockStatus": "low"}, "parameter 'stockStatus': Input should be"),
    _case("woocommerce", "woo_products_list", {"minPrice": "abc"}, "minPrice 'abc' is not a decimal amount"),
    _case("woocommerce", "woo_products_list", {"category": "shoes"}, "category 'shoes' must be an id or"),
    _case("woocommerce", "woo_reports_sales", {"dateMin": "2025-03-01", "dateMax": "2025-01-01"},
          "dateMin 2025-03-01 is after dateMax 2025-01-01"),
    _case("woocommerce", "woo_products_update", {"productId": 1, "productData": {"regular_price": "NaN"}},
          "productData.regular_price 'NaN' is not a decimal amount"),
    _case("calendar", "list_events", {**CAL_WINDOW, "timeMin": "2025-09-01 10:37:00 UTC"},
          "timeMin '2025-09-01 10:37:00 UTC' is not an RFC 3339 date-time"),
    _case("calendar", "list_events", {**CAL_WINDOW, "timeMax": ""}, "timeMax '' is not an RFC 3339 date-time"),
    _case("calendar", "list_events", {**CAL_WINDOW, "pageToken": "garbage"}, "pageToken is not a token"),
    _case("calendar", "list_events", {"timeMin": "2025-03-09T02:30:00", "timeMax": "2025-03-10"},
          "2025-03-09T02:30:00 does not exist in America/New_York"),
    _case("calendar", "create_event", {"summary": "x", "start": {"dateTime": "2025-10-01T10:00:00",
                                                                 "timeZone": "Mars/Base"},
                                       "end": {"dateTime": "2025-10-01T11:00:00Z"}},
          "timeZone 'Mars/Base' is not an IANA time zone name"),
    _case("canvas", "canvas_list_calendar_events", {"start_date": "2025-01-15 10:37:00 UTC"},
          "'2025-01-15 10:37:00 UTC' is not an ISO 8601 instant with a time zone"),
    _case("canvas", "canvas_update_assignment", {"course_id": 1, "assignment_id": 1, "due_at": "2025-01-15T10:37:00"},
          "'2025-01-15T10:37:00' is not an ISO 8601 instant with a time zone"),
    _case("canvas", "canvas_submit_grade", {"course_id": 1, "assignment_id": 1, "user_id": 1, "grade": "B+"},
          "grade 'B+' not understood"),
    _case("canvas", "canvas_update_user_profile", {"time_zone": "Eastern Time (US & Canada)"},
          "time_zone 'Eastern Time (US & Canada)' is not an IANA time zone name"),
    _case("email", "search_emails", {"query": "kickoff", "folder": "Nope"}, "folder 'Nope' does not exist",
          "NOT_FOUND"),
    _case("email", "mark_emails", {"email_ids": ["1"], "status": "starred"}, "parameter 'status': Input should be"),
    _case("email", "send_email", {"to": "not an address", "subject": "s", "body": "b"},
          "to: 'not an address' is not a valid e-mail address"),
    _case("email", "read_email", {"email_id": "1.5"}, "email_id must be a numeric id"),
    _case("google_sheet", "get_sheet_data", {"sheet": "Stock", "range": "R1C1:R2C2"}, "'R1C1:R2C2' is not an A1 range"),
    _case("google_sheet", "get_sheet_data", {"sheet": "Stock", "range": "Other!A1:B2"},
          "range 'Other!A1:B2' names sheet 'Other', but the sheet argument is 'Stock'"),
    _case("google_sheet", "get_sheet_data", {"sheet": "Stock", "range": "XFE1"},
          "range Stock!XFE1 exceeds the grid limits"),
    _case("google_sheet", "update_cells", {"sheet": "Stock", "range": "A1:B2", "data": [["x", "y", "z"]]},
          "data has 3 columns but the range has 2"),
    _case("google_sheet", "update_cells", {"sheet": "Stock", "range": "A1", "data": [[10**30]]},
          "integer out of range"),
    _case("excel", "read_data_from_excel", {**BOOK, "start_cell": "foo"}, "'foo' is not a cell reference"),
    _case("excel", "read_data_from_excel", {**BOOK, "start_cell": "B2", "end_cell": "A1"},
          "end cell A1 comes before start cell B2"),
    _case("excel", "format_range", {**BOOK, "start_cell": "A1", "font_color": "red"},
          "font_color 'red' is not a hex colour"),
    _case("excel", "apply_formula", {**BOOK, "cell": "H1", "formula": "=FOO(1)"}, "unknown function FOO"),
    _case("excel", "create_pivot_table", {**BOOK, "data_range": "A1:D6", "rows": ["region"], "values": ["units"],
                                          "agg_func": "median"}, "parameter 'agg_func': Input should be"),
    _case("memory", "search_nodes", {"query": "   "}, "query must be a non-empty string"),
    _case("pdf_tools", "search_pdf_content", {"pdf_file_path": "invoices.pdf", "pattern": "("},
          "pattern is not a valid regular expression"),
    _case("pdf_tools", "read_pdf_pages", {"pdf_file_path": "invoices.pdf", "start_page": 99, "end_page": 100},
          "start_page 99 is past the last page"),
    _case("filesystem", "read_text_file", {"path": "notes.txt", "head": 1, "tail": 1}, "give head or tail, not both"),
    _case("filesystem", "edit_file", {"path": "notes.txt", "edits": [{"oldText": "absent", "newText": "x"}]},
          "edit 1: oldText not found"),
    _case("terminal", "run_command", {"command": "echo $((1/0))"}, "command substitution $(...) is not supported"),
    _case("python_execute", "python_execute", {"code": "print(1)", "timeout": 0}, "parameter 'timeout'"),
    _case("claim_done", "claim_done", {"force": True}, "unknown parameter 'force'"),
    _case("bigquery", "storage_create_bucket", {"bucket_name": "probe-bucket", "location": "MARS"},
          "parameter 'location': String should match pattern"),
    _case("bigquery", "bigquery_run_query", {"query": "SELECT 1/0 AS x"}, "division by zero: 1 / 0"),
    _case("bigquery", "bigquery_run_query", {"query": "SELECT 9223372036854775807 + 1 AS x"},
          "int64 overflow: 9223372036854775807 + 1"),
    _case("snowflake", "read_query", {"query": "SELECT 1/0 AS X"}, "Division by zero"),
    _case("snowflake", "write_query", {"query": "INSERT INTO NEVER_WRONG_EVENTS VALUES (1, 'not a time')"},
          "value 'not a time' is not a TIMESTAMP_TZ(9)"),
]

COMPUTED = [  # a value the tool can represent is computed, not refused or left null
    pytest.param("woocommerce", "woo_products_list", {"sku": "BOOT-1,TEE-1"}, ['"sku":"BOOT-1"', '"sku":"TEE-1"'],
                 id="woo-sku-list"),
    pytest.param("woocommerce", "woo_products_list", {"search": "shirt T"}, ['"name":"T-Shirt"', '"total":1'],
                 id="woo-search-words-in-any-order"),
    pytest.param("woocommerce", "woo_orders_list", {"dateAfter": "2025-03-14T17:29:00+05:30"},
                 ['"date_created_gmt":"2025-03-14T12:00:00"', '"total":1'], id="woo-offset"),
    pytest.param("woocommerce", "woo_orders_list", {"dateAfter": "2025-03-14 07:59"},
                 ['"date_created":"2025-03-14T08:00:00"', '"total":1'], id="woo-site-time-to-the-minute"),
    pytest.param("canvas_admin", "canvas_list_account_users", {"account_id": 1, "search_term": "5"},
                 ['"login_id":"adam"', '"total":1'], id="canvas-search-by-full-user-id"),
    pytest.param("calendar", "list_events", {**CAL_WINDOW, "q": "reading SR"}, ['"summary":"SR reading group"'],
                 id="calendar-q-words-in-any-order"),
    pytest.param("calendar", "list_events", {**CAL_WINDOW, "q": "lee@uni.edu"}, ['"summary":"Faculty retreat"'],
                 id="calendar-q-attendee"),
    pytest.param("bigquery", "storage_create_bucket", {"bucket_name": "probe-region", "location": "europe-north1"},
                 ['"location":"EUROPE-NORTH1"'], id="storage-bucket-in-a-region"),
    pytest.param("bigquery", "bigquery_run_query", {"query": "SELECT TIMESTAMP '2025-01-15 10:37:00 UTC' AS t"},
                 ['"t":"2025-01-15 10:37:00 UTC"'], id="bigquery-timestamp-utc-suffix"),
    pytest.param("bigquery", "bigquery_run_query", {"query": "SELECT x FROM UNNEST([1, 3, 2]) AS x"},
                 ['"rows":[{"x":1},{"x":3},{"x":2}]'], id="bigquery-unnest"),
    pytest.param("snowflake", "read_query", {"query": "SELECT TO_TIMESTAMP('2025-01-15 10:37:00 +0000') AS T"},
                 ['"T":"2025-01-15 10:37:00.000"'], id="snowflake-to-timestamp-offset"),
]


Caller = Callable[[str, dict[str, Any]], tuple[str, bool]]


class Worlds:
    """One small world per server, built on first use and shared by the cases."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.callers: dict[str, Caller] = {}

    def make(self, servers: list[str], now: str = "2025-01-15T09:00:00Z", tz: str = "UTC",
             **meta: Any) -> tuple[World, Database]:
        world_meta = WorldMeta(task="test", seed=0, params={}, now=now, tz=tz, generator_version="test", **meta)
        return create_world(self.root / f"{len(self.callers)}-{'-'.join(servers)}" / "world", world_meta, servers)

    def caller(self, server: str) -> Caller:
        if server not in self.callers:
            self.callers[server] = getattr(self, f"_{server}")()
        return self.callers[server]

    @staticmethod
    def _plain(harness: ServerHarness) -> Caller:
        return lambda tool, args: harness.call(tool, **args)

    def _woocommerce(self) -> Caller:
        return self._plain(build_store(self.make))

    def _calendar(self) -> Caller:
        return self._plain(build_calendar(self.make))

    def _email(self) -> Caller:
        return self._plain(ServerHarness(email_tools, build_mail(self.make).world))

    def _memory(self) -> Caller:
        return self._plain(build_memory(self.make))

    def _pdf_tools(self) -> Caller:
        return self._plain(build_pdfs(self.make))

    def _google_sheet(self) -> Caller:
        sheets, ids = build_sheets(self.make)
        return lambda tool, args: sheets.call(tool, spreadsheet_id=ids["Inventory"], **args)

    def _canvas_as(self, login: str) -> Caller:
        world, db = self.make(["canvas"], now=canvas_seed.NOW)
        canvas_seed.seed(db)
        db.dispose()
        harness = ServerHarness(canvas_tools, world)
        harness.ok_text("canvas_login", login_id=login, password=canvas_seed.PASSWORDS[login])
        return self._plain(harness)

    def _canvas(self) -> Caller:
        return self._canvas_as("tina")  # a teacher

    def _canvas_admin(self) -> Caller:
        return self._canvas_as("adam")  # an account administrator

    def _excel(self) -> Caller:
        harness = ServerHarness(excel_tools, self.make(["excel"])[0])
        for name in (BOOK["filepath"], PENDING["filepath"]):
            harness.ok_text("create_workbook", filepath=name)
            harness.ok_text("write_data_to_excel", filepath=name, sheet_name="Sheet1", data=SALES)
        harness.ok_text("apply_formula", **PENDING, cell="C3", formula="=2*2")
        return self._plain(harness)

    def _filesystem(self) -> Caller:
        world = self.make(["filesystem"])[0]
        (world.workspace / "notes.txt").write_text("one\ntwo\n", encoding="utf-8")
        return self._plain(ServerHarness(filesystem_tools, world))

    def _terminal(self) -> Caller:
        return self._plain(ServerHarness(terminal_tools, self.make(["terminal"])[0]))

    def _python_execute(self) -> Caller:
        return self._plain(ServerHarness(python_tools, self.make(["python_execute"])[0]))

    def _claim_done(self) -> Caller:
        return self._plain(ServerHarness(claim_tools, self.make(["claim_done"])[0]))

    def _bigquery(self) -> Caller:
        return self._plain(ServerHarness(bigquery_tools, seeded_world(self.root / "bigquery", gcloud_seed.seeded)))

    def _snowflake(self) -> Caller:
        harness = ServerHarness(snowflake_tools, seeded_world(self.root / "snowflake", snowflake_seed.seeded))
        harness.ok_text("write_query", query="CREATE TABLE NEVER_WRONG_EVENTS (ID NUMBER, AT TIMESTAMP_TZ)")
        return self._plain(harness)


@pytest.fixture(scope="module")
def worlds(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Worlds]:
    yield Worlds(tmp_path_factory.mktemp("never-wrong"))


@pytest.mark.parametrize(("server", "tool", "args", "code", "message"), FIXED + ALREADY_RIGHT)
def test_what_a_tool_cannot_answer_is_an_error(worlds: Worlds, server: str, tool: str, args: dict[str, Any],
                                               code: str, message: str) -> None:
    text, is_error = worlds.caller(server)(tool, args)
    assert is_error, text
    assert text.startswith(f"Error [{code}]: {tool}: "), text
    assert message in text, text


@pytest.mark.parametrize(("server", "tool", "args", "expected"), COMPUTED)
def test_what_a_tool_can_answer_is_computed(worlds: Worlds, server: str, tool: str, args: dict[str, Any],
                                            expected: list[str]) -> None:
    text, is_error = worlds.caller(server)(tool, args)
    assert not is_error, text
    for part in expected:
        assert part in text, text


def test_digits_of_other_scripts_stay_text(worlds: Worlds) -> None:
    """USER_ENTERED and formulas read ASCII digits only: "٣" (Arabic-Indic three) is text, not
    the number 3, and a formula adding to it is #VALUE!."""
    call = worlds.caller("google_sheet")
    written = call("update_cells", {"sheet": "Stock", "range": "H2:K2", "data": [["٣", "3", "=H2+1", "=I2+1"]]})
    assert not written[1], written[0]
    text, is_error = call("get_sheet_data", {"sheet": "Stock", "range": "H2:K2"})
    assert not is_error and '"values":[["٣",3,"#VALUE!",4]]' in text, text


def test_formula_errors_stay_where_sheets_shows_them(worlds: Worlds) -> None:
    """A name no spreadsheet defines is #NAME? as in Sheets; a TEXT pattern read from a cell that
    this server cannot format is #VALUE!, never a guessed text ("h:12" for h:mm)."""
    call = worlds.caller("google_sheet")
    row = ["=NOPE(1)", "h:mm", "=TEXT(0.5,M2)"]
    written = call("update_cells", {"sheet": "Stock", "range": "L2:N2", "data": [row]})
    assert not written[1], written[0]
    text, is_error = call("get_sheet_data", {"sheet": "Stock", "range": "L2:N2"})
    assert not is_error and '"values":[["#NAME?","h:mm","#VALUE!"]]' in text, text
