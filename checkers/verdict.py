"""Verdicts: a list of named yes/no checks; success means every check passed."""

from __future__ import annotations

import traceback
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel

from loca.core.outcome import Check


class Verdict(BaseModel):
    passed: bool
    checks: list[Check]

    @classmethod
    def of(cls, checks: list[Check]) -> Verdict:
        return cls(passed=bool(checks) and all(c.passed for c in checks), checks=checks)

    @property
    def errored(self) -> bool:
        return any(c.error for c in self.checks)

    def failed_names(self) -> list[str]:
        return [c.name for c in self.checks if not c.passed]

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump()


class CheckFailed(Exception):
    """Raised inside a check body to fail it with a reason."""


def run_check(name: str, body: Callable[[], str]) -> Check:
    """Run one check: a body that returns a short success detail, raises CheckFailed with the
    reason, or crashes (reported as an error, never a plain fail)."""
    try:
        return Check(name=name, passed=True, detail=body())
    except CheckFailed as exc:
        return Check(name=name, passed=False, detail=str(exc))
    except Exception as exc:  # a checker bug or unreadable state
        tail = traceback.format_exception_only(type(exc), exc)[-1].strip()
        return Check(name=name, passed=False, detail=f"checker error: {tail}", error=True)
