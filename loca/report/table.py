"""A report table and its three renderings: Markdown, CSV and LaTeX (booktabs)."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Value:
    """A number as shown (fixed digits, optional interval and marks); None shows as a dash."""

    value: float | None
    lo: float | None = None
    hi: float | None = None
    digits: int = 1
    mark: str = ""

    def text(self) -> str:
        if self.value is None:
            return "–"
        shown = f"{self.value:,.{self.digits}f}"
        if self.lo is not None and self.hi is not None:
            shown += f" [{self.lo:.{self.digits}f}, {self.hi:.{self.digits}f}]"
        return shown + self.mark


def _plain(number: float | None) -> str:
    """A number for CSV: rounded so that the bytes do not depend on float noise."""
    if number is None:
        return ""
    rounded = round(float(number), 6)
    return str(int(rounded)) if rounded == int(rounded) else repr(rounded)


@dataclass
class Table:
    name: str
    """File stem (`tables/<name>.csv`)."""
    title: str
    labels: list[str]
    """Headers of the leading label columns (model, strategy, ...)."""
    columns: list[str]
    rows: list[tuple[list[str], list[Value]]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def add(self, labels: list[str], values: list[Value]) -> None:
        self.rows.append((labels, values))

    def markdown(self) -> str:
        header = [*self.labels, *self.columns]
        lines = ["| " + " | ".join(header) + " |",
                 "|" + "|".join(["---"] * len(self.labels) + ["--:"] * len(self.columns)) + "|"]
        lines += ["| " + " | ".join([*(_md(x) for x in labels), *(v.text() for v in values)]) + " |"
                  for labels, values in self.rows]
        notes = [f"\n{note}" for note in self.notes]
        return f"### {self.title}\n\n" + "\n".join(lines) + "\n" + "\n".join(notes) + ("\n" if notes else "")

    def csv(self) -> str:
        """Label columns, then per column its value, and `<column> lo`, `<column> hi` and
        `<column> flag` where any row has an interval or a mark there."""
        spans = [any(values[i].lo is not None for _, values in self.rows) for i in range(len(self.columns))]
        flags = [any(values[i].mark for _, values in self.rows) for i in range(len(self.columns))]
        header = list(self.labels)
        for column, span, flag in zip(self.columns, spans, flags):
            header += [column] + ([f"{column} lo", f"{column} hi"] if span else []) + \
                ([f"{column} flag"] if flag else [])
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(header)
        for labels, values in self.rows:
            line = list(labels)
            for value, span, flag in zip(values, spans, flags):
                line += [_plain(value.value)] + ([_plain(value.lo), _plain(value.hi)] if span else []) + \
                    ([value.mark.strip()] if flag else [])
            writer.writerow(line)
        return buffer.getvalue()

    def latex(self) -> str:
        spec = "l" * len(self.labels) + "r" * len(self.columns)
        lines = [r"\begin{table}[ht]", r"\centering", rf"\caption{{{_tex(self.title)}}}",
                 rf"\begin{{tabular}}{{{spec}}}", r"\toprule",
                 " & ".join(_tex(h) for h in [*self.labels, *self.columns]) + r" \\", r"\midrule"]
        lines += [" & ".join([*(_tex(x) for x in labels), *(_tex(v.text()) for v in values)]) + r" \\"
                  for labels, values in self.rows]
        lines += [r"\bottomrule", r"\end{tabular}"]
        lines += [rf"\par\smallskip{{\footnotesize {_tex(note)}}}" for note in self.notes]
        lines += [r"\end{table}"]
        return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    return text.replace("|", r"\|")


_TEX = {"\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
        "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
        "–": "--", "·": r"$\cdot$", "†": r"$^\dagger$", "Δ": r"$\Delta$", "≤": r"$\le$"}


def _tex(text: str) -> str:
    return "".join(_TEX.get(ch, ch) for ch in text)
