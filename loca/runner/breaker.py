"""The run's circuit breaker: when episodes in a row end because the model provider failed in
the same way, one that a person must fix (nothing listens at the address, its name does not
resolve, no answer at all, the key is refused, the model or tool calling is missing), the run
stops scheduling episodes instead of spending each one on the same failure. A provider that
truncated the prompt (`scaffolds.provider_checks`) stops the run at its first episode: every
other episode on that server would be played on a part of its prompt."""

from __future__ import annotations

from dataclasses import dataclass

from loca.runner.records import EpisodeRecord
from scaffolds.clients import agent_key_env, agent_profile
from scaffolds.result import PROVIDER_STATES

DEFAULT_THRESHOLD = 3
TRIPPING_KINDS = frozenset({"connection_refused", "dns", "unreachable", "auth", "model_not_found",
                            "tool_choice"})
"""Failures no retry mends (`scaffolds.clients.base.FaultKind`); rate limits, server errors and
too-long prompts are not among them."""
MESSAGE_CHARS = 160
"""The provider's own message is quoted up to this many characters."""


@dataclass(frozen=True)
class Trip:
    """Why the breaker stopped the run."""

    kind: str
    episodes: int
    message: str
    """The error message of the last of those episodes."""


class Breaker:
    """Trips once `threshold` episodes finished one after another all end in `llm_error` of the
    same tripping kind, or at once on a provider state (0 never trips)."""

    def __init__(self, threshold: int = DEFAULT_THRESHOLD) -> None:
        self.threshold = threshold
        self.tripped: Trip | None = None
        self._kind: str | None = None
        self._count = 0

    def observe(self, record: EpisodeRecord) -> Trip | None:
        """Count one finished episode; the trip once the breaker has tripped."""
        if self.threshold and self.tripped is None and record.terminal_state in PROVIDER_STATES:
            message = record.error.message if record.error else record.terminal_state
            self.tripped = Trip(record.terminal_state, 1, message)
            return self.tripped
        kind = record.error_kind if record.terminal_state == "llm_error" else None
        if kind not in TRIPPING_KINDS:
            self._kind, self._count = None, 0
        else:
            self._count = self._count + 1 if kind == self._kind else 1
            self._kind = kind
        if self.tripped is None and self.threshold and self._count >= self.threshold:
            assert kind is not None and record.error is not None
            self.tripped = Trip(kind, self._count, record.error.message)
        return self.tripped


def explain(trip: Trip, agent: str, base_url: str | None) -> str:
    """One line: what happened, the likely cause and what to do about it."""
    if trip.kind in PROVIDER_STATES:  # the message is the explanation, with the fix
        return f"stopped: {trip.kind}: {trip.message}; then rerun the same command to retry it"
    profile = agent_profile(agent, base_url)
    where = base_url or (profile.base_url if profile else None) or "the provider's endpoint"
    model = profile.model if profile else agent.partition(":")[2]
    quoted = trip.message if len(trip.message) <= MESSAGE_CHARS else trip.message[: MESSAGE_CHARS - 1] + "…"
    causes = {
        "connection_refused": f"nothing accepts connections at {where}: start the model server "
                              f"or fix --base-url",
        "dns": f"the host name of {where} does not resolve: fix --base-url",
        "unreachable": f"no answer from {where} within the timeouts: check that the server runs "
                       f"and can be reached (--connect-timeout, --response-timeout)",
        "auth": f"the provider refused the API key in {agent_key_env(agent)} ({quoted}): set a "
                f"valid key",
        "model_not_found": f"{where} serves no model {model!r} ({quoted}): check the model name "
                           f"(GET {where.rstrip('/')}/models lists them) and --base-url",
        "tool_choice": f"the server refuses tool calls ({quoted}); vLLM needs "
                       f"--enable-auto-tool-choice --tool-call-parser <parser>",
    }
    what = (f"{trip.episodes} episodes in a row failed the same way" if trip.episodes > 1
            else "an episode failed")
    return (f"stopped after {what} ({trip.kind}): {causes.get(trip.kind, quoted)}; then rerun the "
            f"same command to retry them")
