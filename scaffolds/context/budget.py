"""Budget terms and triggers (spec §3.3).

`W` context window, `R` output reserve, `M` safety margin, `B = W - R - M` the input budget that
every request's predicted size `P` must stay within. A trigger is a token count or a fraction of
`B` (never of `W`, so no trigger can lie beyond the point where truncation takes over).
"""

from __future__ import annotations

from dataclasses import dataclass

Trigger = int | float


@dataclass(frozen=True, slots=True)
class Budget:
    window: int
    reserve: int
    margin: int

    @property
    def input_budget(self) -> int:
        return self.window - self.reserve - self.margin

    def tokens(self, trigger: Trigger) -> int:
        """The trigger as a token count."""
        if isinstance(trigger, float):
            return int(trigger * self.input_budget)
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
