"""What `loca run` prints: where a resumed run stands, progress while episodes run (a bar on a
terminal; elsewhere a line every few seconds with done/planned, rate and time left), a line for
each episode that failed outside the agent (naming what the provider ran into), and at the end
one table of tasks x lengths (passed/planned), the totals, the terminal states that are not
successes and where the results are. With `verbose`, a row per episode and its failed checks."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from pathlib import Path

from rich import box
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Column, Table

from loca.core.outcome import EpisodeMetrics
from loca.records import Tally
from loca.runner import EpisodeRecord, Resume, RunSummary
from scaffolds.result import AGENT_STATES

TICK_S = 10.0
"""Seconds between two progress lines when the output is not a terminal."""


def duration(seconds: float) -> str:
    """`45s`, `12m`, `2h05m`."""
    whole = round(seconds)
    if whole < 60:
        return f"{whole}s"
    if whole < 3600:
        return f"{whole // 60}m"
    return f"{whole // 3600}h{whole % 3600 // 60:02d}m"


def kilo(tokens: int) -> str:
    """Tokens in thousands: `20.3K`."""
    return f"{tokens / 1000:,.1f}K"


def progress_line(done: int, planned: int, finished_now: int, elapsed_s: float) -> str:
    """`episodes 125/525 done (23%), 2.00/s, about 3m left` (`3.0/min` below one a second; rate
    and time left from the episodes this command finished)."""
    line = f"episodes {done}/{planned} done ({100 * done // max(planned, 1)}%)"
    if finished_now and elapsed_s > 0:
        rate = finished_now / elapsed_s
        shown = f"{rate:.2f}/s" if rate >= 1 else f"{60 * rate:.1f}/min"
        line += f", {shown}, about {duration((planned - done) / rate)} left"
    return line


class _Ticker(threading.Thread):
    """Emits `line()` every `every_s` seconds until stopped."""

    def __init__(self, every_s: float, line: Callable[[], str], emit: Callable[[str], None]) -> None:
        super().__init__(daemon=True, name="loca-progress")
        self.every_s, self.line, self.emit = every_s, line, emit
        self._stopped = threading.Event()

    def run(self) -> None:
        while not self._stopped.wait(self.every_s):
            self.emit(self.line())

    def stop(self) -> None:
        self._stopped.set()
        self.join()


class RunConsole:
    """The output of one `loca run` command on `console`."""

    def __init__(self, console: Console, out: Path, tick_s: float = TICK_S,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.console, self.out, self.tick_s, self.clock = console, out, tick_s, clock
        self.done = self.planned = self.finished_now = 0
        self.started = clock()
        self._bar: Progress | None = None
        self._ticker: _Ticker | None = None

    def start(self, resume: Resume) -> None:
        """Say where a resumed run stands, then show progress."""
        if not resume.fresh:
            self.console.print(f"resuming {self.out}: {resume.done} done, {resume.retry} to retry, "
                               f"{resume.new} new", soft_wrap=True)
        self.done, self.planned = resume.done, resume.done + resume.retry + resume.new
        self.started = self.clock()
        if self.console.is_terminal:
            self._bar = Progress(TextColumn("episodes"), BarColumn(), MofNCompleteColumn(),
                                 TimeRemainingColumn(), console=self.console, transient=True)
            self._bar.add_task("episodes", total=self.planned, completed=self.done)
            self._bar.start()
        else:
            self._ticker = _Ticker(self.tick_s, self.line, lambda text: self.console.print(text, soft_wrap=True))
            self._ticker.start()

    def line(self) -> str:
        return progress_line(self.done, self.planned, self.finished_now, self.clock() - self.started)

    def episode(self, record: EpisodeRecord) -> None:
        """Count a finished episode; one that failed outside the agent gets a line saying how."""
        self.done += 1
        self.finished_now += 1
        if self._bar is not None:
            self._bar.advance(self._bar.task_ids[0])
        if record.terminal_state not in AGENT_STATES:
            kind = f" ({record.error_kind})" if record.error_kind else ""
            message = " ".join((record.error.message if record.error else "").split())[:200]
            self.console.print(f"  {escape(record.episode_id)}: {record.terminal_state}{kind}: "
                               f"{escape(message)}", soft_wrap=True, highlight=False)

    def close(self) -> None:
        if self._bar is not None:
            self._bar.stop()
        if self._ticker is not None:
            self._ticker.stop()
        self._bar = self._ticker = None

    def interrupted(self) -> str:
        return (f"interrupted: {self.done} of {self.planned} episodes done; rerun the same command to "
                f"resume (finished episodes are kept)")

    def report(self, summary: RunSummary, title: str, records: list[EpisodeRecord] | None = None) -> None:
        """The end of the run: the table, totals, what did not pass and where the results are;
        with `records` (verbose), a row per episode first."""
        if records is not None:
            self.console.print(episode_table(records))
            for r in records:
                if not r.success:
                    failed = ", ".join(r.failed_checks()) or "-"
                    self.console.print(f"  {escape(r.episode_id)}: {r.terminal_state}; failed checks: "
                                       f"{escape(failed)}", soft_wrap=True, highlight=False)
        self.console.print(f"{escape(title)}: passed/planned", soft_wrap=True, highlight=False)
        self.console.print(summary_table(summary, self.console.width))
        self.console.print(f"passed {summary.passed}/{summary.episodes} (accuracy {summary.accuracy:.3f}); "
                           f"max length deviation {100 * summary.max_length_deviation:.1f}%", soft_wrap=True)
        if summary.not_passed or summary.finished < summary.episodes:
            self.console.print(f"not passed: {not_passed(summary)}", soft_wrap=True, highlight=False)
        self.console.print(f"results in {self.out} (`loca view {self.out}` shows every episode)",
                           soft_wrap=True, highlight=False)


def not_passed(summary: RunSummary) -> str:
    """`claimed_done 2, llm_error 3 (connection_refused 3), not finished 4`."""
    parts = []
    for state, count in summary.not_passed.items():
        kinds = ", ".join(f"{k} {n}" for k, n in summary.by_error_kind.items()) if state == "llm_error" else ""
        parts.append(f"{state} {count}" + (f" ({kinds})" if kinds else ""))
    if summary.finished < summary.episodes:
        parts.append(f"not finished {summary.episodes - summary.finished}")
    return ", ".join(parts)


def _cell(tally: Tally | None) -> str:
    if tally is None:
        return ""
    shown = f"{tally.passed}/{tally.episodes}"
    return f"[green]{shown}[/]" if tally.passed == tally.episodes else shown


def summary_table(summary: RunSummary, width: int = 80) -> Table:
    """Tasks x lengths, passed/planned, with the totals of each row and column; columns two
    spaces apart, or one where that does not fit in `width`."""
    roomy = _summary_table(summary, 1)
    return roomy if Console(width=10 * width).measure(roomy).maximum <= width else _summary_table(summary, 0)


def _summary_table(summary: RunSummary, gap: int) -> Table:
    lengths = list(summary.by_length)
    longest = max((len(t) for t in summary.by_task), default=4)
    table = Table(Column("task", no_wrap=True, min_width=min(longest, 40)),
                  *(Column(name, justify="right", no_wrap=True) for name in lengths),
                  Column("all", justify="right", no_wrap=True),
                  box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 0, 0, gap))
    for task, cells in summary.by_task_length.items():
        table.add_row(task, *(_cell(cells.get(name)) for name in lengths), _cell(summary.by_task[task]))
    if len(summary.by_task) > 1:
        table.add_section()
        total = Tally(episodes=summary.episodes, passed=summary.passed)
        table.add_row("all", *(_cell(summary.by_length[name]) for name in lengths), _cell(total))
    return table


def episode_table(records: list[EpisodeRecord]) -> Table:
    """A row per episode: how it ended, the largest request and the whole trajectory in
    tokens, and how often the context strategies fired with the tokens they freed."""
    table = Table(Column("task", no_wrap=True), Column("episode", no_wrap=True), Column("result", no_wrap=True),
                  *(Column(name, justify="right", no_wrap=True) for name in ("peak", "trajectory", "firings")),
                  box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, padding=(0, 1, 0, 0))
    for r in records:
        m = r.metrics or EpisodeMetrics()
        fired = sum(m.strategy_firings.values())
        freed = sum(m.tokens_freed.values())
        table.add_row(r.task, f"{r.length} s{r.seed}" + (f" t{r.trial}" if r.trial else ""),
                      "[green]passed[/]" if r.success else r.terminal_state,
                      kilo(m.peak_request_tokens), kilo(m.trajectory_tokens),
                      f"{fired} ({kilo(freed)})" if fired else "-")
    return table
