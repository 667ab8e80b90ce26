"""Typed output specifications: what a task's agent must produce, declared once in the task's
spec and shared by its generator (initial files), checker (check factories) and oracle (what to
write). Each kind says which workspace files (`files`) and which rows of the state (`rows`)
producing it may change: together they are the task's writable set, the only part of the world
`no_side_effects` lets change."""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

# Normalisations by name (see docs/concepts/verdicts.md); checkers.normalize implements them.
NORMS = ("S", "Si", "E", "N", "I", "T", "date", "time")


@dataclass(frozen=True)
class Rows:
    """Rows of one state table that producing an output may touch. Rows added after the
    snapshot are allowed where `where` holds. Existing rows where it holds: with `columns`
    empty, they stay as they were; with `columns` named, only those columns may change (the
    rows themselves stay, the rest of each as it was); with `columns` None, they may change in
    any way or go. `where` is an SQL condition on the table's columns (subqueries allowed),
    read on the state as generated and again as graded."""

    table: str
    where: str = "1"
    columns: tuple[str, ...] | None = ()

    @property
    def free(self) -> bool:
        """Whether existing rows where `where` holds may change in any way or go."""
        return self.columns is None

    @property
    def partial(self) -> bool:
        """Whether existing rows where `where` holds may change in `columns` only."""
        return bool(self.columns)


def sql_text(value: str) -> str:
    """`value` as an SQL string literal (for `Rows.where`)."""
    return "'" + value.replace("'", "''") + "'"


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
    rows: ClassVar[tuple[Rows, ...]] = ()

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
class MailTemplate:
    """A workspace file the instruction says to fill in and send: the line `subject` matches
    (searched line by line; its group 1, or the whole match) is the subject, and the body is the
    text after that line, or after the line `body` matches when given. `placeholder` matches a
    placeholder; the answer fills each one per message (`fill`)."""

    file: str
    placeholder: str
    subject: str = r".+"
    body: str | None = None

    def parts(self, text: str) -> tuple[str, str]:
        """(the subject line's template, the body's template) of the template's `text`."""
        lines = text.splitlines()
        found = next(((i, m) for i, line in enumerate(lines) if (m := re.fullmatch(self.subject, line.strip()))),
                     None)
        if found is None:
            raise ValueError(f"{self.file}: no line is a subject line ({self.subject!r})")
        at, match = found
        subject = (match.group(1) if match.re.groups else match.group(0)).strip()
        start = at + 1
        if self.body is not None:
            marker = next((i for i in range(at + 1, len(lines)) if re.fullmatch(self.body, lines[i].strip())), None)
            if marker is None:
                raise ValueError(f"{self.file}: no line marks the body ({self.body!r})")
            start = marker + 1
        return subject, "\n".join(lines[start:]).strip()

    def placeholders(self, text: str) -> list[str]:
        """The placeholders of a text, in order, each once."""
        return list(dict.fromkeys(re.findall(self.placeholder, text)))


def fill(text: str, values: Mapping[str, str]) -> str:
    """`text` with every placeholder of `values` replaced by its value."""
    for placeholder, value in values.items():
        text = text.replace(placeholder, value)
    return text


MAIL_TABLES = ("email_message", "email_recipient", "email_attachment", "email_transfer",
               "email_transfer_attachment")


@dataclass(frozen=True)
class SentMail:
    """E-mail the agent sends from its mailbox, judged as the mail system transferred it (every
    message its address sent since the snapshot, wherever its copies now are). `subject` is the
    exact subject when the instruction fixes one; `template`, the workspace template each message
    fills (the answer's entries give `fill`, its values by placeholder); `mentions`, a pattern
    of the entity ids (SKUs, invoice or student ids) a message may name: each names exactly the
    `ids` of its answer entry, none invented."""

    subject: str | None = None
    attachment: str | None = None  # e.g. "zip" when each message carries one such file
    template: MailTemplate | None = None
    mentions: str | None = None
    answer: str = "mail"  # the answer's entry listing the expected messages
    files: ClassVar[tuple[str, ...]] = ()
    rows: ClassVar[tuple[Rows, ...]] = tuple(Rows(table) for table in MAIL_TABLES)


@dataclass(frozen=True)
class NewEvents:
    """Calendar events the agent creates; existing events stay unchanged."""

    title: str  # a template such as "{acronym} camera-ready deadline"
    files: ClassVar[tuple[str, ...]] = ()
    rows: ClassVar[tuple[Rows, ...]] = (Rows("cal_event"), Rows("cal_attendee"))

    @property
    def answer_rows(self) -> DbRows:
        """The rows holding the answer: the events, by their title and start."""
        return DbRows("cal_event", ("id",), values=("summary", "start_at"))


@dataclass(frozen=True)
class DbRows:
    """Rows the agent adds to (or changes in) a service table, keyed by `key`; `where` and
    `columns` as in `Rows` (by default: rows may be added, none changed). `values`: the
    columns that hold the answer (default: the changeable `columns`, else every column but the
    key), which the generic answer mutants alter."""

    table: str
    key: tuple[str, ...]
    where: str = "1"
    columns: tuple[str, ...] | None = ()
    values: tuple[str, ...] = ()
    files: ClassVar[tuple[str, ...]] = ()

    @property
    def rows(self) -> tuple[Rows, ...]:
        return (Rows(self.table, self.where, self.columns),)


@dataclass(frozen=True)
class NewSpreadsheet:
    """A Google spreadsheet the agent creates (titled `title`), with its tabs and cells;
    existing ones stay unchanged."""

    title: str
    files: ClassVar[tuple[str, ...]] = ()

    @property
    def rows(self) -> tuple[Rows, ...]:
        return (Rows("gs_spreadsheet", f"title = {sql_text(self.title)}"),
                Rows("gs_sheet", f"spreadsheet IN ({self._books})"), Rows("gs_cell", self._cells))

    @property
    def _books(self) -> str:
        return f"SELECT pk FROM gs_spreadsheet WHERE title = {sql_text(self.title)}"

    @property
    def _cells(self) -> str:
        return f"sheet IN (SELECT pk FROM gs_sheet WHERE spreadsheet IN ({self._books}))"

    @property
    def answer_rows(self) -> DbRows:
        """The rows holding the answer: the new spreadsheet's cells, by their value."""
        return DbRows("gs_cell", ("sheet", "row", "col"), where=self._cells, values=("value",))


Output = TableFile | SentMail | NewEvents | DbRows | NewSpreadsheet


def csv_text(header: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A CSV table file's text: the header row, then the rows, quoted as RFC 4180 requires."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue()
