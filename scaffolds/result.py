"""Terminal states (spec §1.7) and the record of one finished episode."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel

from loca.core.outcome import EpisodeError, EpisodeMetrics

TerminalState = Literal[
    "claimed_done", "final_text", "max_turns", "max_tool_calls", "time_limit",
    "context_overflow", "llm_error", "provider_truncated", "env_setup_error", "tool_infra_error",
    "harness_error",
]
AGENT_STATES: frozenset[str] = frozenset({
    "claimed_done", "final_text", "max_turns", "max_tool_calls", "time_limit", "context_overflow",
})
"""Endings caused by the agent; the others are infrastructure failures a runner may retry."""
PROVIDER_STATES: frozenset[str] = frozenset({"provider_truncated"})
"""Infrastructure endings that say the provider is set up wrongly for the run (a checked fact
about the server, not a passing fault): another attempt or episode on it would end the same way,
so a runner neither retries them nor goes on scheduling episodes on that provider."""


class EpisodeResult(BaseModel):
    terminal_state: TerminalState
    graded: bool
    success: bool
    """Graded and every check passed; everything else scores 0."""
    reward: float
    verdict: dict[str, Any] | None
    """The grading verdict (`passed`, `checks`) when graded."""
    diagnostic: dict[str, Any] | None
    """`env.evaluate()` for ungraded agent-class endings; never changes the score."""
    metrics: EpisodeMetrics
    error: EpisodeError | None
    env: dict[str, Any]
    """Task, seed, target and measured environment length, world hash and directory."""
    timings: dict[str, float]
    """Wall-clock seconds (reset, loop, grading, total); diagnostics only."""
    config_hash: str
    prompts: list[dict[str, Any]]
    trajectory_path: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready record (one line of `episodes.jsonl`)."""
        return self.model_dump(mode="json", by_alias=True)
