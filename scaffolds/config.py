"""Configuration of one agent loop (pydantic, unknown keys rejected)."""

from __future__ import annotations

import hashlib
import json
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from scaffolds.clients.base import Sampling
from scaffolds.context.config import ContextConfig
from scaffolds.profiles import ModelProfile
from scaffolds.prompts import get_prompt


class Limits(BaseModel):
    """Per-episode limits (see docs/concepts/agent-loop.md)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    max_turns: int = Field(default=300, ge=1)
    max_tool_calls: int = Field(default=500, ge=0)
    """Executed calls, the terminal tool excepted."""
    max_wall_time_s: float = Field(default=7200.0, gt=0)
    """Deadline over the whole loop, reset excluded."""
    tool_timeout_s: float = Field(default=120.0, gt=0)
    setup_timeout_s: float = Field(default=600.0, gt=0)


class AgentConfig(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    system_prompt: str = "system/react@1"
    """Prompt id of the system message; `system/none@1` sends none."""
    on_text_reply: Literal["end", "nudge"] = "end"
    grade_final_text: bool = True
    max_nudges: int = Field(default=2, ge=0)
    diagnostic_grading: bool = True
    """Grade ungraded agent-class endings with `env.evaluate()`; never changes the score."""
    limits: Limits = Field(default_factory=Limits)
    sampling: Sampling = Field(default_factory=Sampling)
    context: ContextConfig = Field(default_factory=ContextConfig)

    @field_validator("system_prompt")
    @classmethod
    def _known_system_prompt(cls, value: str) -> str:
        if not value.startswith("system/"):
            raise ValueError(f"{value!r} is not a system prompt id")
        try:
            get_prompt(value)
        except KeyError as exc:
            raise ValueError(exc.args[0]) from None
        return value

    @model_validator(mode="after")
    def _context_fits(self) -> AgentConfig:
        self.context.check(self.sampling.max_output_tokens)
        awareness = self.context.strategies.awareness
        if awareness is not None and awareness.placement == "system" \
                and not get_prompt(self.system_prompt).text:
            raise ValueError("awareness.placement: system needs a system prompt "
                             f"({self.system_prompt} sends none)")
        return self

    def check_profile(self, profile: ModelProfile, strict: bool = True) -> None:
        """The validation rules (see docs/concepts/context.md) that need the model's profile;
        raises `ValueError` naming the fields. `strict=False` lets through options the profile
        does not list as supported."""
        window = self.context.max_context_tokens
        if window > profile.context_window:
            raise ValueError(f"context.max_context_tokens={window} is above {profile.id}'s "
                             f"context window ({profile.context_window})")
        compaction = self.context.strategies.compaction
        if compaction is not None and compaction.summary_max_tokens > profile.max_output_tokens:
            raise ValueError(f"compaction.summary_max_tokens={compaction.summary_max_tokens} is "
                             f"above {profile.id}'s output limit ({profile.max_output_tokens})")
        reasoning = [name for name in ("reasoning_effort", "reasoning_budget_tokens")
                     if getattr(self.sampling, name) is not None]
        if strict and reasoning and not profile.reasoning:
            raise ValueError(f"sampling.{reasoning[0]}: {profile.id} is not a reasoning model "
                             "(set strict: false to send it anyway)")

    def warnings(self) -> list[str]:
        """Settings that are allowed but probably not meant (see docs/concepts/context.md)."""
        return self.context.check(self.sampling.max_output_tokens)

    def config_hash(self) -> str:
        canonical = json.dumps(self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode("utf-8")).hexdigest()
