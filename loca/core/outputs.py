"""Typed output specifications: what a task's agent must produce, declared once in the task's
spec and shared by its generator (initial files), checker (check factories) and oracle (what to
write). Each kind says which workspace files or database tables producing it may change, which
is the task's writable set for `no_side_effects`."""

from __future__ import annotations

import csv
import io
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

# Normalisations by name (tasks.md §0); checkers.normalize implements them.
NORMS = ("S", "Si", "E", "N", "I", "T", "date", "time")


@dataclass(frozen=True)
class Column:
    name: str
    norm: str = "S"

    def __post_init__(self) -> None:
        if self.norm not in NORMS:
            raise ValueError(f"column {self.name}: unknown normalisation {self.norm!r}; use {NORMS}")


@dataclass(frozen=True)
class TableFile:
    """A table the agent writes into a workspace file: a sheet of an `.xlsx` workbook (the
    first sheet unless `sheet` names one) or a CSV file. Rows are keyed by `key` columns."""

    file: str
    columns: tuple[Column, ...]
    key: tuple[str, ...]
    sheet: str | None = None
    grows: ClassVar[tuple[str, ...]] = ()

    def __post_init__(self) -> None:
        missing = [k for k in self.key if k not in self.headers]
        if missing:
            raise ValueError(f"{self.file}: key columns {missing} are not columns")

    @property
    def headers(self) -> list[str]:
        return [c.name for c in self.columns]

    @property
    def kind(self) -> str:
        return "xlsx" if self.file.lower().endswith((".xlsx", ".xlsm")) else "csv"

    @property
    def files(self) -> tuple[str, ...]:
        return (self.file,)


@dataclass(frozen=True)
class SentMail:
    """E-mail the agent sends from its mailbox; judged by diffing every mailbox against the
    snapshot. `subject` is the exact subject when the instruction fixes one."""

    subject: str | None = None
    attachment: str | None = None  # e.g. "zip" when each message carries one such file
    files: ClassVar[tuple[str, ...]] = ()
    grows: ClassVar[tuple[str, ...]] = ("email_message", "email_recipient", "email_attachment")


@dataclass(frozen=True)
class NewEvents:
    """Calendar events the agent creates; existing events stay unchanged."""

    title: str  # a template such as "{acronym} camera-ready deadline"
    files: ClassVar[tuple[str, ...]] = ()
    grows: ClassVar[tuple[str, ...]] = ("cal_event", "cal_attendee")


@dataclass(frozen=True)
class DbRows:
    """Rows the agent adds to (or changes in) a service table, keyed by `key`."""

    table: str
    key: tuple[str, ...]
    files: ClassVar[tuple[str, ...]] = ()

    @property
    def grows(self) -> tuple[str, ...]:
        return (self.table,)


@dataclass(frozen=True)
class NewSpreadsheet:
    """A Google spreadsheet the agent creates (titled `title`); existing ones stay unchanged."""

    title: str
    files: ClassVar[tuple[str, ...]] = ()
    grows: ClassVar[tuple[str, ...]] = ("gs_spreadsheet", "gs_sheet", "gs_cell")


Output = TableFile | SentMail | NewEvents | DbRows | NewSpreadsheet


def csv_text(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A CSV table file's text: the header row, then the rows, quoted as RFC 4180 requires."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue()
