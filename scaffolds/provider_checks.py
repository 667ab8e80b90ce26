"""A sanity check of the provider against the gym's own count of what it was sent.

After the first response of an episode, the prompt size the provider reports is compared with
the gym's count of that request (`P`; see docs/concepts/context.md). Tokenizers differ by a few tens of percent at
most; a provider that counts less than half of it read only part of the prompt: the server cut
it to its own context size (Ollama's default `num_ctx` of a few thousand tokens does this
silently), so every later turn would be played by a model that never saw the task whole. The
episode then ends `provider_truncated`, and another episode on the same server would end the
same way. A response without usage cannot be checked: that is recorded, and the gym's own
counts stand in for the provider's.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict

from scaffolds.clients.base import Usage

TRUNCATION_RATIO = 0.5
"""Reported prompt tokens below this share of the gym's count mean a truncated prompt."""

PromptOutcome = Literal["ok", "truncated", "usage_missing"]


class PromptCheck(BaseModel):
    """The outcome of comparing the provider's prompt count with the gym's (a `provider_check`
    ledger event)."""

    model_config = ConfigDict(frozen=True)

    outcome: PromptOutcome
    predicted: int
    """The gym's count of the request: tools, system prompt and view."""
    reported: int | None
    """The provider's prompt tokens; None when it reported no usable usage."""


def check_prompt(usage: Usage, predicted: int) -> PromptCheck:
    if not usage.reported:
        return PromptCheck(outcome="usage_missing", predicted=predicted, reported=None)
    truncated = usage.input_tokens < TRUNCATION_RATIO * predicted
    return PromptCheck(outcome="truncated" if truncated else "ok", predicted=predicted,
                       reported=usage.input_tokens)


class ProviderTruncated(Exception):
    """The provider read far less of the prompt than it was sent."""

    def __init__(self, check: PromptCheck, window: int) -> None:
        self.check = check
        reported = check.reported or 0
        super().__init__(
            f"the provider counted {reported:,} prompt tokens for a request the gym counts at "
            f"{check.predicted:,} ({100 * reported / max(1, check.predicted):.0f}%): the server "
            f"cut the prompt to its own context size, so the model saw only part of the tools "
            f"and the task. Give the server a context of at least the run's window ({window:,} "
            f"tokens): Ollama `OLLAMA_CONTEXT_LENGTH={window} ollama serve` (or `PARAMETER "
            f"num_ctx {window}` in a Modelfile), llama.cpp `llama-server --ctx-size {window}`; "
            f"or lower context.max_context_tokens to what the server holds")
