"""`loca view` on a 2M-token episode: a small first response, pages to the end, messages read
back whole on demand, and an index whose texts are bounded."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from loca.view import Catalog, build_app
from loca.view.runs import PAGE_MAX
from loca.view.timeline import FOLD_CHARS, SERIES_POINTS, pooled, read_timeline
from tests.long_episode import write_long_run


class Served:
    def __init__(self, root: Path, eid: str) -> None:
        self.key = f"0:{eid}"
        self.trajectory = root / "episodes" / eid / "trajectory.jsonl"
        self.client = TestClient(build_app(Catalog([root])), base_url="http://127.0.0.1")

    def get(self, path: str, **params: object) -> dict[str, object]:
        answer = self.client.get(path, params={"key": self.key, **params})
        assert answer.status_code == 200, answer.text
        return answer.json()  # type: ignore[no-any-return]


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Served:
    return Served(*write_long_run(tmp_path_factory.mktemp("view") / "run", 2_000_000))


def ledger_messages(path: Path) -> list[dict[str, object]]:
    return [event["payload"] for line in path.read_text().splitlines()
            for event in [json.loads(line)] if event["type"] == "message"]


def test_the_first_response_of_a_2m_episode_is_small(served: Served) -> None:
    answer = served.client.get("/api/episode", params={"key": served.key})
    assert answer.status_code == 200 and len(answer.content) < 64_000
    summary = answer.json()
    assert summary["row"]["length"] == "2m" and summary["row"]["target_tokens"] == 2_000_000
    assert summary["calls"] > SERIES_POINTS >= len(summary["series"])
    assert sum(p["calls"] for p in summary["series"]) == summary["calls"]
    whole_series = read_timeline(served.trajectory).series
    assert max(p["predicted"] for p in summary["series"]) == max(p["predicted"] for p in whole_series)
    first = served.client.get("/api/entries", params={"key": served.key, "offset": 0, "limit": 100})
    assert len(first.content) < 100 * (FOLD_CHARS + 1000)
    assert first.json()["total"] == summary["entries"] > 5000


def test_paging_reaches_the_end_in_ledger_order(served: Served) -> None:
    total = int(served.get("/api/episode")["entries"])  # type: ignore[call-overload]
    items: list[dict[str, object]] = []
    while len(items) < total:
        page = served.get("/api/entries", offset=len(items), limit=PAGE_MAX)
        assert page["total"] == total and page["items"]
        items += page["items"]  # type: ignore[arg-type]
    assert len(items) == total
    mids = [e["mid"] for e in items if e["kind"] == "message"]
    assert mids == list(range(len(ledger_messages(served.trajectory))))
    assert items[-1]["kind"] == "terminal"
    assert served.get("/api/entries", offset=total, limit=10)["items"] == []


def test_a_folded_message_is_read_back_whole_from_the_file(served: Served) -> None:
    messages = ledger_messages(served.trajectory)
    last = messages[-1]
    assert last["role"] == "tool" and len(str(last["content"])) > FOLD_CHARS
    page = served.get("/api/entries", offset=0, limit=PAGE_MAX)
    folded = next(e for e in page["items"] if e.get("folded"))  # type: ignore[union-attr]
    assert len(folded["content"]) < FOLD_CHARS
    expanded = served.get("/api/message", mid=str(last["mid"]))
    assert expanded["content"] == last["content"] and expanded["folded"] is False
    assert expanded["content_chars"] == len(str(last["content"]))


def test_the_index_keeps_no_long_text(served: Served) -> None:
    timeline = read_timeline(served.trajectory)
    texts = [e["content"] or "" for e in timeline.entries if e["kind"] == "message"]
    texts += [p.get("text") or p.get("arguments") or "" for e in timeline.entries
              if e["kind"] == "message" for p in e["parts"]]
    assert max(len(t) for t in texts) <= FOLD_CHARS
    assert sum(len(t) for t in texts) < served.trajectory.stat().st_size / 3


def test_a_message_no_longer_where_the_index_has_it_is_refused(tmp_path: Path) -> None:
    root, eid = write_long_run(tmp_path / "run", 5_000)
    served = Served(root, eid)
    mid = max(read_timeline(served.trajectory).by_mid)
    timeline = read_timeline(served.trajectory)
    timeline.spans[mid] = (0, timeline.spans[mid][1])  # as if the file had been rewritten
    answer = served.client.get("/api/message", params={"key": served.key, "mid": str(mid)})
    assert answer.status_code == 404 and "no longer where" in answer.json()["error"]


def test_pooling_keeps_each_run_s_peak_firings_and_freed_tokens() -> None:
    series = [{"turn": t, "predicted": 100 * t if t != 3 else 900, "view_messages": t,
               "fired": ["truncate"] if t % 2 else [], "freed": {"truncate": 10} if t % 2 else {}}
              for t in range(1, 7)]
    assert pooled(series, most=6) == series
    assert pooled(series, most=2) == [
        {"turn": 3, "predicted": 900, "view_messages": 3, "fired": ["truncate"],
         "freed": {"truncate": 20}, "calls": 3},
        {"turn": 6, "predicted": 600, "view_messages": 6, "fired": ["truncate"],
         "freed": {"truncate": 10}, "calls": 3}]
