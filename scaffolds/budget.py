"""Budget terms and triggers (see docs/concepts/context.md), and their defaults.

`W` context window, `R` output reserve, `M` safety margin, `B = W - R - M` the input budget that
every request's predicted size `P` must stay within. A trigger is a token count or a fraction of
`B` (never of `W`, so no trigger can lie beyond the point where truncation takes over).

This module imports nothing else of the scaffolds, so the command line states the defaults in
its help without loading them.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction

Trigger = int | float

DEFAULT_WINDOW = 128_000
"""W when `max_context_tokens` is not set: the paper's window, the same for every model."""
DEFAULT_OUTPUT_LIMIT = 32_768
"""The main calls' output limit (`max_output_tokens`) when not set; R defaults to it."""
MARGIN_FLOOR = 512
MARGIN_PERCENT = 2
"""M when `margin` is not set: max(MARGIN_FLOOR, MARGIN_PERCENT % of W)."""


def default_margin(window: int) -> int:
    return max(MARGIN_FLOOR, window * MARGIN_PERCENT // 100)


@dataclass(frozen=True, slots=True)
class Budget:
    window: int
    reserve: int
    margin: int

    @property
    def input_budget(self) -> int:
        return self.window - self.reserve - self.margin

    def describe(self) -> str:
        """`B = W - R - M` with this budget's numbers."""
        return (f"B = {self.input_budget:,} (window W {self.window:,} - output reserve R "
                f"{self.reserve:,} - margin M {self.margin:,})")

    def tokens(self, trigger: Trigger) -> int:
        """The trigger as a token count. A fraction is taken as the decimal it is written as
        (0.009 of 1,500,000 is 13,500, where binary floats give 13,499.99...)."""
        if isinstance(trigger, float):
            return int(Fraction(repr(trigger)) * self.input_budget)
        return trigger

    def over(self, predicted: int, trigger: Trigger) -> bool:
        """True when a request of `predicted` tokens passes the trigger."""
        return predicted > self.tokens(trigger)

    def check_trigger(self, field: str, trigger: Trigger) -> None:
        """A fraction must lie in (0, 1), a token count in (0, B)."""
        if isinstance(trigger, bool):
            raise ValueError(f"{field}: {trigger!r} is not a trigger")
        if isinstance(trigger, float) and not 0 < trigger < 1:
            raise ValueError(f"{field}={trigger}: a fraction trigger must lie in (0, 1)")
        if isinstance(trigger, int) and not 0 < trigger < self.input_budget:
            raise ValueError(f"{field}={trigger}: a token trigger must lie in (0, B="
                             f"{self.input_budget})")


DEFAULT_BUDGET = Budget(DEFAULT_WINDOW, DEFAULT_OUTPUT_LIMIT, default_margin(DEFAULT_WINDOW))
DEFAULTS_TEXT = (
    f"input budget B = W - R - M; by default W = {DEFAULT_WINDOW:,} (context.max_context_tokens), "
    f"R = the output limit, {DEFAULT_OUTPUT_LIMIT:,} (context.output_reserve), "
    f"M = max({MARGIN_FLOOR}, {MARGIN_PERCENT}% of W) = {DEFAULT_BUDGET.margin:,} "
    f"(context.margin), so B = {DEFAULT_BUDGET.input_budget:,}")
"""The defaults of the budget terms in one sentence (`loca run --help`, the README)."""
