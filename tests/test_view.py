"""`loca view`: the JSON endpoints over two real oracle runs (paging, folding, 404s, damaged
files, loopback only, the connection limit), and the page end to end in headless Chromium driven by selenium."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import time
import tomllib
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path
from typing import Any

import pytest
from starlette.testclient import TestClient

from loca.cli import main
from loca.core.http_limits import HttpLimits
from loca.records import RunFileError
from loca.view import Catalog, build_app, is_loopback
from loca.view.timeline import FOLD_CHARS, PREVIEW_CHARS
from tests.http_probe import refused_past

ROOT = Path(__file__).resolve().parent.parent
TASK = "toy"  # the toy task (tests/toy)
SMALL_WINDOW = """\
context:
  max_context_tokens: 24000
  output_reserve: 4000
  strategies:
    clear_tool_results: {trigger: 0.5}
"""
CHROMIUM, CHROMEDRIVER = Path("/usr/bin/chromium"), Path("/usr/bin/chromedriver")
REQUIRE_BROWSER = os.environ.get("LOCA_REQUIRE_BROWSER") == "1"
WINDOW = (1400, 1000)


def loca(*args: str) -> int:
    with pytest.raises(SystemExit) as exit_:
        main(list(args))
    return int(exit_.value.code or 0)


@dataclass(frozen=True)
class Runs:
    react: Path
    cleared: Path
    """With a window small enough that tool-result clearing fires."""

    def record(self, run: Path) -> dict[str, Any]:
        (record,) = [json.loads(line) for line in (run / "episodes.jsonl").read_text().splitlines()]
        return record

    def events(self, run: Path) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.trajectory(run).read_text(encoding="utf-8").splitlines()]

    def trajectory(self, run: Path) -> Path:
        return run / self.record(run)["trajectory"]

    def key(self, run: Path) -> str:
        return f"{[self.react, self.cleared].index(run)}:{self.record(run)['episode_id']}"


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> Runs:
    """The oracle on the toy task at 8k, seed 0: under ReAct, and with clearing firing."""
    root = tmp_path_factory.mktemp("view")
    (root / "small.yaml").write_text(SMALL_WINDOW)
    made = Runs(root / "react", root / "cleared")
    common = ("run", "--tasks", TASK, "--lengths", "8k", "--seeds", "0", "--tool-filter", "task")
    assert loca(*common, "--out", str(made.react)) == 0
    assert loca(*common, "--strategy", "clear_tool_results", "--strategy-config", str(root / "small.yaml"),
                "--out", str(made.cleared)) == 0
    return made


def client(*roots: Path) -> TestClient:
    return TestClient(build_app(Catalog(list(roots))), base_url="http://127.0.0.1")


def messages(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e["payload"] for e in events if e["type"] == "message"]


# --- endpoints ----------------------------------------------------------------------------------

def test_the_episode_list_filters_and_pages(runs: Runs) -> None:
    api = client(runs.react, runs.cleared)
    everything = api.get("/api/episodes").json()
    assert everything["total"] == 2 and everything["filters"]["strategy"] == ["clear_tool_results", "react"]
    assert everything["filters"]["length"] == ["8k"] and everything["filters"]["passed"] == ["yes"]
    cleared = api.get("/api/episodes", params={"strategy": "clear_tool_results"}).json()
    (row,) = cleared["items"]
    assert row["key"] == runs.key(runs.cleared) and row["firings"] >= 1 and row["passed"] == "yes"
    assert row["turns"] == runs.record(runs.cleared)["metrics"]["turns"]
    assert api.get("/api/episodes", params={"passed": "no"}).json()["total"] == 0
    second = api.get("/api/episodes", params={"offset": 1, "limit": 1}).json()
    assert second["total"] == 2 and [r["key"] for r in second["items"]] == [runs.key(runs.cleared)]
    for bad in ({"limit": 0}, {"limit": 501}, {"offset": -1}, {"offset": "x"}):
        response = api.get("/api/episodes", params=bad)
        assert response.status_code == 400 and "offset" in response.json()["error"]


def test_an_episode_summary_holds_checks_series_and_firings(runs: Runs) -> None:
    record = runs.record(runs.cleared)
    api = client(runs.react, runs.cleared)
    summary = api.get("/api/episode", params={"key": runs.key(runs.cleared)}).json()
    assert [c["name"] for c in summary["checks"]] == [c["name"] for c in record["checks"]]
    series = record["metrics"]["context_series"]
    assert [(p["turn"], p["predicted"], p["fired"]) for p in summary["series"]] == \
        [(p["turn"], p["predicted"], p["fired"]) for p in series]
    fired = [p for p in summary["series"] if "clear_tool_results" in p["fired"]]
    assert fired and all(p["freed"]["clear_tool_results"] > 0 for p in fired)
    assert sum(p["freed"].get("clear_tool_results", 0) for p in summary["series"]) == \
        record["metrics"]["tokens_freed"]["clear_tool_results"]
    assert summary["problems"] == [] and summary["tools"]["count"] == record["tool_count"]


def test_entries_page_in_ledger_order_and_fold_long_results(runs: Runs) -> None:
    api, key = client(runs.react, runs.cleared), runs.key(runs.cleared)
    whole = api.get("/api/entries", params={"key": key, "limit": 500}).json()
    pages = [api.get("/api/entries", params={"key": key, "offset": o, "limit": 7}).json()
             for o in range(0, whole["total"], 7)]
    assert [e for p in pages for e in p["items"]] == whole["items"]
    assert api.get("/api/entries", params={"key": key, "offset": whole["total"]}).json()["items"] == []
    seqs = [e["seq"] for e in whole["items"]]
    assert seqs == sorted(seqs)
    shown = [e for e in whole["items"] if e["kind"] == "message"]
    assert [e["mid"] for e in shown] == [m["mid"] for m in messages(runs.events(runs.cleared))]
    longest = max((m for m in messages(runs.events(runs.cleared)) if m["role"] == "tool"),
                  key=lambda m: len(m["content"]))
    assert len(longest["content"]) > FOLD_CHARS
    entry = next(e for e in shown if e["mid"] == longest["mid"])
    assert entry["folded"] and entry["content"] == longest["content"][:PREVIEW_CHARS]
    assert entry["content_chars"] == len(longest["content"]) and entry["exec"]["status"] == "executed"
    full = api.get("/api/message", params={"key": key, "mid": longest["mid"]}).json()
    assert full["content"] == longest["content"] and not full["folded"]
    short = next(e for e in shown if e["role"] == "assistant")
    assert not short["folded"] and short["parts"][0]["type"] == "tool_call"


def test_cleared_results_carry_the_placeholder_the_model_saw(runs: Runs) -> None:
    events = runs.events(runs.cleared)
    clear = next(e["payload"] for e in events if e["type"] == "strategy" and e["payload"]["decision"] == "clear")
    mid = clear["changes"]["clear"][0]
    api = client(runs.react, runs.cleared)
    entry = api.get("/api/message", params={"key": runs.key(runs.cleared), "mid": mid}).json()
    (effect,) = [x for x in entry["effects"] if x["effect"] == "cleared"]
    assert effect == {"strategy": "clear_tool_results", "turn": clear["turn"], "effect": "cleared",
                      "placeholder": clear["changes"]["placeholder"]}


def test_what_the_runs_do_not_hold_is_404_and_bad_queries_400(runs: Runs) -> None:
    api, key = client(runs.react), runs.key(runs.react)
    assert api.get("/api/episode", params={"key": "0:nothing"}).status_code == 404
    assert api.get("/api/entries", params={"key": "7:" + key}).status_code == 404
    assert api.get("/api/message", params={"key": key, "mid": 99999}).status_code == 404
    assert api.get("/api/message", params={"key": key, "mid": "x"}).status_code == 404
    assert api.get("/api/entries").status_code == 400
    assert api.get("/static/nothing.js").status_code == 404
    page = api.get("/")
    assert page.status_code == 200 and "/static/app.js" in page.text
    assert api.get("/static/app.js").status_code == 200


def _copy(run: Path, to: Path) -> Path:
    shutil.copytree(run, to, ignore=shutil.ignore_patterns("world"))
    return to


def test_damaged_files_are_read_readably(runs: Runs, tmp_path: Path) -> None:
    run = _copy(runs.react, tmp_path / "run")
    key = f"0:{runs.record(run)['episode_id']}"
    path = runs.trajectory(run)
    lines = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join([*lines[:5], "{not json", *lines[5:], lines[-1][:20]]) + "\n", encoding="utf-8")
    api = client(run)
    summary = api.get("/api/episode", params={"key": key}).json()
    assert summary["problems"][0].startswith("line 6 skipped") and "cut off" in summary["problems"][1]
    assert summary["checks"] and api.get("/api/entries", params={"key": key}).json()["total"] > 10
    episodes = run / "episodes.jsonl"
    episodes.write_text("{oops\n" + episodes.read_text())
    response = api.get("/api/episodes")
    assert response.status_code == 422 and "episodes.jsonl: line 1 is not JSON" in response.json()["error"]
    with pytest.raises(RunFileError):
        Catalog([run])


def test_retries_show_in_the_ledger(runs: Runs, tmp_path: Path) -> None:
    run = _copy(runs.react, tmp_path / "run")
    path = runs.trajectory(run)
    lines = path.read_text(encoding="utf-8").splitlines()
    retry = {"seq": 999, "type": "llm_retry", "payload": {"turn": 1, "number": 1, "outcome": "transient",
                                                           "status": 429, "message": "Too Many Requests",
                                                           "wait_s": 2.0, "latency_s": 0.1}}
    path.write_text("\n".join([*lines[:4], json.dumps(retry), *lines[4:]]) + "\n", encoding="utf-8")
    items = client(run).get("/api/entries", params={"key": f"0:{runs.record(run)['episode_id']}"}).json()["items"]
    (shown,) = [e for e in items if e["kind"] == "llm_retry"]
    assert shown["payload"] == {k: v for k, v in retry["payload"].items() if k != "latency_s"}


def test_unfinished_and_escaping_episodes(runs: Runs, tmp_path: Path) -> None:
    run = _copy(runs.react, tmp_path / "run")
    api = client(run)
    assert api.get("/api/episodes").json()["total"] == 1
    manifest = run / "manifest.jsonl"
    planned = json.loads(manifest.read_text())
    manifest.write_text(manifest.read_text() + json.dumps({**planned, "episode_id": "later", "seed": 1}) + "\n")
    record = runs.record(run)
    (run / "episodes.jsonl").write_text(json.dumps({**record, "trajectory": "../../../etc/passwd"}) + "\n")
    rows = {r["episode_id"]: r for r in api.get("/api/episodes").json()["items"]}  # the run read again
    assert rows["later"]["terminal_state"] == "not finished" and rows["later"]["passed"] == "not finished"
    later = api.get("/api/episode", params={"key": "0:later"}).json()
    assert later["entries"] == 0 and "no trajectory file yet" in later["problems"][0]
    assert api.get("/api/entries", params={"key": f"0:{record['episode_id']}"}).status_code == 404


def test_loopback_only(runs: Runs, capsys: pytest.CaptureFixture[str]) -> None:
    assert all(map(is_loopback, ["127.0.0.1", "127.3.2.1", "::1", "[::1]", "localhost"]))
    assert not any(map(is_loopback, ["0.0.0.0", "10.0.0.1", "::", "example.com", ""]))
    api = client(runs.react)
    assert api.get("/api/episodes", headers={"host": "evil.example:8780"}).status_code == 421
    assert api.get("/api/episodes", headers={"host": "127.0.0.1.evil.example"}).status_code == 421
    assert api.get("/api/episodes", headers={"host": "[::1]:8780"}).status_code == 200
    assert loca("view", str(runs.react), "--host", "0.0.0.0") == 2
    assert "loopback only" in capsys.readouterr().err
    assert loca("view", str(runs.react.parent / "nowhere")) == 2
    assert "not a run directory" in capsys.readouterr().err


def test_a_busy_port_is_refused_before_the_viewer_says_it_serves(
        runs: Runs, capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        assert loca("view", str(runs.react), "--port", str(port)) == 2
    out, err = capsys.readouterr()
    assert "serving" not in out and f"port {port}" in err and "--port" in err
    assert len(err.strip().splitlines()) == 1


def test_the_page_s_assets_are_package_data() -> None:
    patterns = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"]["loca.view"]
    static = ROOT / "loca" / "view" / "static"
    files = [p.relative_to(static.parent).as_posix() for p in static.iterdir()]
    assert files and all(any(fnmatch(f, pattern) for pattern in patterns) for f in files)
    page = (static / "index.html").read_text() + (static / "app.js").read_text() + (static / "app.css").read_text()
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "") and "https://" not in page


# --- the page in a real browser -----------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture
def viewer(runs: Runs) -> Iterator[str]:
    """`loca view` on both runs, as a user starts it; its URL."""
    port = _free_port()
    process = subprocess.Popen([sys.executable, "-m", "loca", "view", str(runs.react), str(runs.cleared),
                                "--port", str(port)], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(url + "api/episodes", timeout=2):
                    break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    output = process.stdout.read().decode() if process.stdout else ""
                    pytest.fail(f"loca view did not start: {output}")
                time.sleep(0.1)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stdout:
            process.stdout.close()


def test_past_its_connection_limit_a_request_is_answered_503(viewer: str) -> None:
    port = int(viewer.rstrip("/").rsplit(":", 1)[1])
    assert refused_past(port, HttpLimits().max_connections, "/api/episodes")


@pytest.fixture
def browser() -> Iterator[Any]:
    """Headless Chromium from the system's packages (Selenium Manager is never asked for one)."""
    missing = [str(p) for p in (CHROMIUM, CHROMEDRIVER) if not p.is_file()]
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        missing.append("the selenium package")
    if missing:
        message = f"the browser test needs {', '.join(missing)} (Debian: apt-get install chromium chromium-driver)"
        if REQUIRE_BROWSER:
            pytest.fail(message + "; LOCA_REQUIRE_BROWSER=1 makes it required")
        pytest.skip(message)
    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--no-first-run",
                     "--disable-extensions", f"--window-size={WINDOW[0]},{WINDOW[1]}"):
        options.add_argument(argument)
    driver = webdriver.Chrome(service=Service(executable_path=str(CHROMEDRIVER)), options=options)
    driver.implicitly_wait(0)
    try:
        yield driver
    finally:
        driver.quit()


def _wait(driver: Any, condition: Any, what: str, timeout: float = 15) -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, timeout).until(lambda d: condition(d), message=f"waiting for {what}")


def _screenshot(driver: Any, name: str, height: int | None = None) -> None:
    """Saved under LOCA_VIEW_SCREENSHOTS when set (the README's pictures), the window made
    `height` pixels tall for it."""
    folder = os.environ.get("LOCA_VIEW_SCREENSHOTS")
    if folder:
        from PIL import Image

        if height:
            driver.set_window_size(WINDOW[0], height)
        path = Path(folder) / name
        driver.save_screenshot(str(path))
        driver.set_window_size(*WINDOW)
        with Image.open(path) as shot:  # 256 colours: a third of the bytes, the same picture
            small = shot.convert("RGB").quantize(colors=256, method=Image.Quantize.FASTOCTREE)
        small.save(path, optimize=True)


@pytest.mark.slow
@pytest.mark.browser
def test_the_page_in_headless_chromium(browser: Any, runs: Runs, viewer: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    def rows(d: Any) -> list[Any]:
        return d.find_elements(By.CSS_SELECTOR, "#episodes tbody tr")

    browser.get(viewer)
    _wait(browser, lambda d: len(rows(d)) == 2, "both episodes in the table")
    _screenshot(browser, "viewer_table.png")
    Select(browser.find_element(By.ID, "filter-strategy")).select_by_value("clear_tool_results")
    _wait(browser, lambda d: len(rows(d)) == 1, "the table filtered by strategy")
    (row,) = rows(browser)
    assert row.get_attribute("data-key") == runs.key(runs.cleared)
    assert "clear_tool_results" in row.text and "yes" in row.text

    row.find_element(By.TAG_NAME, "a").click()
    events, record = runs.events(runs.cleared), runs.record(runs.cleared)
    ledger = messages(events)
    _wait(browser, lambda d: len(d.find_elements(By.CSS_SELECTOR, "#timeline li.message")) == len(ledger),
          "every message of the ledger")
    _screenshot(browser, "viewer_episode.png", height=1900)
    checks = browser.find_elements(By.CSS_SELECTOR, "#checks tbody tr")
    assert [(c.get_attribute("data-check"), c.find_elements(By.TAG_NAME, "td")[1].text) for c in checks] == \
        [(c["name"], "yes") for c in record["checks"]]
    assert record["checks"][0]["detail"] in checks[0].text

    points = browser.find_elements(By.CSS_SELECTOR, "#chart circle.point")
    series = record["metrics"]["context_series"]
    assert [(int(p.get_attribute("data-turn")), int(p.get_attribute("data-tokens"))) for p in points] == \
        [(p["turn"], p["predicted"]) for p in series]
    markers = browser.find_elements(By.CSS_SELECTOR, "#chart path.firing")
    assert [int(m.get_attribute("data-turn")) for m in markers] == [p["turn"] for p in series if p["fired"]]
    assert any("clear_tool_results" in m.get_attribute("data-fired") for m in markers)
    last_turn = f'#timeline li.request[data-turn="{series[-1]["turn"]}"]'
    in_view = (f"const box = document.querySelector('{last_turn}').getBoundingClientRect();"
               "return window.scrollY > 0 && box.top >= 0 && box.bottom <= window.innerHeight;")
    assert not browser.execute_script(in_view)
    points[-1].click()
    _wait(browser, lambda d: d.execute_script(in_view), "the chart's last point scrolling its turn into view")

    call = next(p for m in ledger if m["role"] == "assistant" for p in m["parts"] if p["type"] == "tool_call")
    shown = browser.find_element(By.CSS_SELECTOR, f'.call[data-call="{call["call_id"]}"]')
    assert call["name"] in shown.text
    assert json.loads(shown.find_element(By.CSS_SELECTOR, "pre.args").text) == call["arguments"]

    clear = next(e["payload"] for e in events if e["type"] == "strategy" and e["payload"]["decision"] == "clear")
    cleared = browser.find_element(By.CSS_SELECTOR, f'#timeline li[data-mid="{clear["changes"]["clear"][0]}"]')
    effect = cleared.find_element(By.CSS_SELECTOR, '.effect[data-effect="cleared"]')
    assert clear["changes"]["placeholder"] in effect.text and f"turn {clear['turn']}" in effect.text
    assert browser.find_elements(By.CSS_SELECTOR, '#timeline li.strategy[data-strategy="clear_tool_results"]')

    longest = max((m for m in ledger if m["role"] == "tool"), key=lambda m: len(m["content"]))
    selector = f'#timeline li[data-mid="{longest["mid"]}"] pre.content'
    text_length = f'return document.querySelector(\'{selector}\').textContent.length'
    assert browser.execute_script(text_length) == PREVIEW_CHARS
    browser.find_element(By.CSS_SELECTOR, f'#timeline li[data-mid="{longest["mid"]}"] button.expand').click()
    _wait(browser, lambda d: d.execute_script(text_length) == len(longest["content"]), "the folded result expanded")
    assert browser.find_element(By.ID, "error").get_attribute("hidden") is not None
    severe = [entry for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
    assert severe == []
