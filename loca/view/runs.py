"""The run directories `loca view` serves: their planned episodes as filterable, paged rows, and
one episode's summary and timeline pages. Runs are read by `loca.records` and read again
when one of their files changes, so a run still in progress shows its new episodes."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from loca.core.lengths import label
from loca.records import Episode, EpisodeRecord, StoredRun, load_run
from loca.records.load import EPISODES, MANIFEST, RUN_JSON
from loca.view.timeline import Timeline, pooled, read_timeline, whole

FILTERS = ("task", "length", "agent", "strategy", "terminal_state", "passed")
"""Row fields the episode table filters on (exact match)."""
PAGE = 100
"""Rows or entries in a page unless asked otherwise."""
PAGE_MAX = 500
UNFINISHED = "not finished"
RUN_FILES = (RUN_JSON, MANIFEST, EPISODES)


class NotFound(LookupError):
    """An episode or message that the runs do not hold."""


@dataclass(frozen=True)
class Listed:
    """One planned episode of a served run, and its record (None while it has not finished)."""

    key: str
    """`<run number>:<episode id>`: unique over the runs served."""
    run: StoredRun
    episode: Episode
    record: EpisodeRecord | None

    def row(self) -> dict[str, Any]:
        """What the episode table shows of it."""
        r, e = self.record, self.episode
        metrics = r.metrics if r else None
        return {
            "key": self.key, "run": self.run.root.name, "episode_id": e.episode_id, "task": e.task,
            "length": label(e.length), "target_tokens": e.length, "seed": e.seed,
            "agent": r.agent if r else e.agent,
            "strategy": (r.strategy if r else None) or e.strategy or self.run.settings.strategy,
            "terminal_state": r.terminal_state if r else UNFINISHED,
            "passed": UNFINISHED if r is None else "yes" if r.success else "no",
            "reward": r.reward if r else None,
            "turns": metrics.turns if metrics else None,
            "tool_calls": metrics.tool_calls if metrics else None,
            "peak_request_tokens": metrics.peak_request_tokens if metrics else None,
            "trajectory_tokens": metrics.trajectory_tokens if metrics else None,
            "firings": sum(metrics.strategy_firings.values()) if metrics else 0,
            "failed_checks": r.failed_checks() if r else [],
        }

    def trajectory(self) -> Path:
        """The episode's ledger file, inside its run directory."""
        root = self.run.root.resolve()
        named = self.record.trajectory if self.record else None
        path = (root / named if named is not None else
                root / "episodes" / self.episode.episode_id / "trajectory.jsonl").resolve()
        if not path.is_relative_to(root) or not path.is_file():
            raise NotFound(f"episode {self.key} has no trajectory file yet")
        return path

    def timeline(self) -> Timeline:
        try:
            return read_timeline(self.trajectory())
        except OSError as exc:
            raise NotFound(f"episode {self.key}: its trajectory cannot be read ({exc.strerror})") from None


def _page(query: Mapping[str, str]) -> tuple[int, int]:
    try:
        offset, limit = int(query.get("offset", 0)), int(query.get("limit", PAGE))
    except ValueError:
        raise ValueError("offset and limit must be integers") from None
    if offset < 0 or not 1 <= limit <= PAGE_MAX:
        raise ValueError(f"offset must be >= 0 and limit within 1..{PAGE_MAX}")
    return offset, limit


class Catalog:
    """The runs served, reloaded when their files change."""

    def __init__(self, roots: list[Path]) -> None:
        self.roots = list(dict.fromkeys(Path(r) for r in roots))
        self._stamp: tuple[Any, ...] = ()
        self._episodes: dict[str, Listed] = {}
        self.episodes()  # a directory that is not a run fails here, at start-up

    def _stamps(self) -> tuple[Any, ...]:
        stamps: list[tuple[int, int] | None] = []
        for root in self.roots:
            for name in RUN_FILES:
                try:
                    stat = (root / name).stat()
                    stamps.append((stat.st_mtime_ns, stat.st_size))
                except OSError:
                    stamps.append(None)
        return tuple(stamps)

    def episodes(self) -> dict[str, Listed]:
        stamp = self._stamps()
        if stamp != self._stamp:
            episodes = {}
            for n, root in enumerate(self.roots):
                run = load_run(root)
                for planned in run.planned:
                    key = f"{n}:{planned.episode_id}"
                    episodes[key] = Listed(key, run, planned, run.record(planned))
            self._episodes, self._stamp = episodes, stamp
        return self._episodes

    def episode(self, key: str) -> Listed:
        found = self.episodes().get(key)
        if found is None:
            raise NotFound(f"no episode {key!r} in the runs served")
        return found

    def listing(self, query: Mapping[str, str]) -> dict[str, Any]:
        """One page of the rows matching the filters given, with every filter's values."""
        offset, limit = _page(query)
        rows = [e.row() for e in self.episodes().values()]
        wanted = {name: query[name] for name in FILTERS if query.get(name)}
        matching = [r for r in rows if all(str(r[name]) == value for name, value in wanted.items())]
        values = {name: sorted({str(r[name]) for r in rows}, key=lambda v: (len(v), v) if name == "length" else v)
                  for name in FILTERS}
        return {"total": len(matching), "offset": offset, "items": matching[offset:offset + limit],
                "filters": values, "runs": [str(root) for root in self.roots]}

    def summary(self, key: str) -> dict[str, Any]:
        """One episode: its row, checks, metrics, ledger header and context series; no entries."""
        episode = self.episode(key)
        record = episode.record
        timeline: Timeline | None = None
        try:
            timeline = episode.timeline()
            problems = timeline.problems
        except NotFound as exc:
            problems = [str(exc)]
        verdict = timeline.verdict if timeline else None
        checks = [c.model_dump() for c in record.checks] if record else (verdict or {}).get("checks")
        header = timeline.header if timeline else {}
        return {"row": episode.row(), "checks": checks or [],
                "metrics": record.metrics.model_dump(mode="json") if record and record.metrics else None,
                "error": record.error.model_dump(mode="json", by_alias=True) if record and record.error else None,
                "world_dir": record.world_dir if record else None,
                "header": {k: header.get(k) for k in ("format", "config", "prompts", "env", "client") if k in header},
                "tools": timeline.tools if timeline else {},
                "series": pooled(timeline.series) if timeline else [],
                "calls": len(timeline.series) if timeline else 0,
                "terminal": timeline.terminal if timeline else None,
                "entries": len(timeline.entries) if timeline else 0, "problems": problems}

    def entries(self, key: str, query: Mapping[str, str]) -> dict[str, Any]:
        """One page of an episode's timeline, long texts folded."""
        offset, limit = _page(query)
        timeline = self.episode(key).timeline()
        return {"total": len(timeline.entries), "offset": offset,
                "items": timeline.entries[offset:offset + limit]}

    def message(self, key: str, mid: str) -> dict[str, Any]:
        """One message entry in full."""
        timeline = self.episode(key).timeline()
        try:
            number = int(mid)
            timeline.by_mid[number]
        except (KeyError, ValueError):
            raise NotFound(f"episode {key} has no message {mid!r}") from None
        try:
            return whole(timeline, number)
        except ValueError as exc:
            raise NotFound(f"episode {key}: {exc}") from None
