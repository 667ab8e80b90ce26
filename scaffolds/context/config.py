"""Configuration of context management and its validation (see docs/concepts/context.md).

Every model forbids unknown keys. Rules that need the input budget `B` (which depends on the
output limit) live in `ContextConfig.check`, run when the agent configuration is built, so a bad
setting fails before any episode starts.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from scaffolds.budget import DEFAULT_WINDOW, Budget, Trigger, default_margin
from scaffolds.clients.openai_wire import ReasoningEcho
from scaffolds.prompts import get_prompt


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _prompt_id(value: str, prefix: str) -> str:
    if not value.startswith(prefix):
        raise ValueError(f"{value!r} is not a {prefix.rstrip('/')} prompt id")
    try:
        get_prompt(value)
    except KeyError as exc:
        raise ValueError(exc.args[0]) from None
    return value


class TruncateConfig(_Strict):
    """Hard truncation (see docs/concepts/context.md)."""

    enabled: bool = True
    min_recent_turns: int = Field(default=1, ge=0)
    oversize_result: Literal["truncate_content", "fail"] = "truncate_content"


class ClearToolResultsConfig(_Strict):
    """Tool-result clearing (see docs/concepts/context.md)."""

    trigger: Trigger = 0.75
    unit: Literal["turn", "call"] = "turn"
    clear_fraction: float | None = Field(default=0.5, gt=0, le=1)
    keep_last: int | None = Field(default=None, ge=0)
    protect_recent: int = Field(default=1, ge=0)
    exclude_tools: tuple[str, ...] = ()
    """Results never cleared, besides the terminal tool's."""
    clear_at_least: int = Field(default=0, ge=0)
    style: Literal["placeholder", "remove"] = "placeholder"
    placeholder: str = "clearing/placeholder@1"
    """A registered prompt id, or the literal text."""
    clear_arguments: bool = False

    @model_validator(mode="before")
    @classmethod
    def _keep_last_replaces_fraction(cls, data: Any) -> Any:
        """Giving `keep_last` alone switches off the default `clear_fraction`."""
        if isinstance(data, dict) and data.get("keep_last") is not None \
                and "clear_fraction" not in data:
            return {**data, "clear_fraction": None}
        return data

    @model_validator(mode="after")
    def _one_amount(self) -> ClearToolResultsConfig:
        if (self.clear_fraction is None) == (self.keep_last is None):
            raise ValueError("clear_tool_results: set exactly one of clear_fraction and keep_last")
        if not placeholder_text(self.placeholder).strip():
            raise ValueError("clear_tool_results.placeholder is empty")
        return self


def placeholder_text(value: str) -> str:
    """A placeholder setting as text: a registered prompt's text, else the value itself."""
    try:
        return get_prompt(value).text
    except KeyError:
        return value


class ClearThinkingConfig(_Strict):
    """Thinking-block clearing (see docs/concepts/context.md)."""

    trigger: Trigger | Literal["always"] = 0.75
    keep_last_turns: int = Field(default=1, ge=0)
    placeholder: str | None = None

    @field_validator("placeholder")
    @classmethod
    def _not_empty(cls, value: str | None) -> str | None:
        if value is not None and not value.strip():
            raise ValueError("clear_thinking.placeholder is empty (leave it out for none)")
        return value


class CompactionConfig(_Strict):
    """Compaction (see docs/concepts/context.md)."""

    trigger: Trigger = 0.85
    prompt: str = "compaction/request@1"
    preamble: str = "compaction/preamble@1"
    summary_max_tokens: int = Field(default=8192, gt=0)
    temperature: float | None = Field(default=None, ge=0, le=2)
    """None inherits the main calls' temperature."""
    tools_mode: Literal["omit", "choice_none"] = "omit"
    keep_recent_turns: int = Field(default=0, ge=0)
    min_summary_tokens: int = Field(default=64, ge=1)
    attempts: int = Field(default=2, ge=1, le=10)
    fallback: Literal["truncate", "fail"] = "truncate"
    cooldown_turns: int = Field(default=3, ge=0)
    summarizer: Literal["model", "scripted"] | None = None
    """`model`: the agent's own client; `scripted`: a deterministic digest of the view, for
    offline runs of scripted agents; None: whichever fits the agent (resolved by the run)."""

    @field_validator("prompt")
    @classmethod
    def _request_prompt(cls, value: str) -> str:
        return _prompt_id(value, "compaction/")

    @field_validator("preamble")
    @classmethod
    def _preamble_prompt(cls, value: str) -> str:
        return _prompt_id(value, "compaction/")


class AwarenessConfig(_Strict):
    """Context awareness (see docs/concepts/context.md)."""

    placement: Literal["task_message", "system"] = "task_message"
    budget_shown: Literal["window", "input_budget", "trigger"] | int = "window"
    keep_notes: Literal["last", "all"] = "last"


HarnessNaming = Literal["plain", "paper"]
"""Harness tool names: `memory_view`, `code_execution` (plain) or the paper's `memory_tool_view`,
`programmatic_tool_calling_code_execution`."""


class MemoryConfig(_Strict):
    """The memory tool (see docs/concepts/context.md): file memory the model keeps across context resets."""

    naming: HarnessNaming = "plain"
    protocol: str = "memory/protocol@1"
    warning: Literal["auto", "on", "off"] = "auto"
    """`auto`: the near-limit warning is on iff clear_tool_results or compaction is."""
    warning_prompt: str = "memory/warning@1"
    warn_fraction: float = Field(default=0.8, gt=0, lt=1)
    clear_results: bool = False
    """Let clear_tool_results clear memory results (by default they are never cleared)."""

    @field_validator("protocol", "warning_prompt")
    @classmethod
    def _memory_prompt(cls, value: str) -> str:
        return _prompt_id(value, "memory/")


class PtcConfig(_Strict):
    """Programmatic tool calling (see docs/concepts/context.md): the harness tool `code_execution`."""

    naming: HarnessNaming = "plain"
    description: str = "ptc/description@1"
    direct_tools: Literal["all", "none"] = "all"
    """`none`: the model calls env tools only from code (the terminal tool stays direct)."""
    default_timeout_s: int = Field(default=60, ge=1, le=120)
    max_timeout_s: int = Field(default=120, ge=1, le=120)
    max_nested_calls: int = Field(default=200, ge=1, le=10_000)
    allowed_tools: tuple[str, ...] | None = None
    """Tools the code may call; None: every env tool but the terminal one (and the memory
    tools when memory is on)."""
    nested_count_toward_limit: bool = True
    sandbox: Literal["auto", "strong", "landlock"] = "auto"
    """The code's confinement: `auto` as the gym's code servers get it (`LOCA_SANDBOX`), or
    forced. Unconfined code is only ever run on the explicit request that covers the whole run."""
    sandbox_python: str | None = None
    """The interpreter the code runs with; None: the gym's own (or `LOCA_SANDBOX_PYTHON`)."""

    @field_validator("description")
    @classmethod
    def _ptc_prompt(cls, value: str) -> str:
        return _prompt_id(value, "ptc/")

    @model_validator(mode="after")
    def _timeouts(self) -> PtcConfig:
        if self.default_timeout_s > self.max_timeout_s:
            raise ValueError(f"ptc.default_timeout_s={self.default_timeout_s} is above "
                             f"ptc.max_timeout_s={self.max_timeout_s}")
        return self


class Strategies(_Strict):
    """The strategies in use: a kind is on when its section is present (truncation: `enabled`)."""

    truncate: TruncateConfig = TruncateConfig()
    clear_thinking: ClearThinkingConfig | None = None
    clear_tool_results: ClearToolResultsConfig | None = None
    compaction: CompactionConfig | None = None
    awareness: AwarenessConfig | None = None
    memory: MemoryConfig | None = None
    ptc: PtcConfig | None = None

    @model_validator(mode="after")
    def _memory_warning(self) -> Strategies:
        if self.memory is not None and self.memory.warning == "on" \
                and self.clear_tool_results is None and self.compaction is None:
            raise ValueError("memory.warning: on needs a reset strategy (clear_tool_results or "
                             "compaction) whose trigger it warns about")
        return self

    def memory_warning(self) -> bool:
        """Whether the memory near-limit warning is in use."""
        return self.memory is not None and self.memory.warning != "off" \
            and (self.clear_tool_results is not None or self.compaction is not None)


STRATEGY_KINDS = ("clear_thinking", "clear_tool_results", "compaction", "awareness", "memory",
                  "ptc")
"""The strategies that can be switched on by name, in their default order (memory and ptc add
tools and prompt text, not view transforms)."""


class ContextConfig(_Strict):
    """Budget terms and strategies of one agent (see docs/concepts/context.md)."""

    max_context_tokens: int = Field(default=DEFAULT_WINDOW, gt=0)
    """W, the context window used for the run."""
    output_reserve: int | None = Field(default=None, gt=0)
    """R; None means the output limit of the main calls (`max_output_tokens`)."""
    margin: int | None = Field(default=None, ge=0)
    """M; None means `budget.default_margin(W)`."""
    order: Literal["thinking_first", "tools_first"] = "thinking_first"
    """Which clearing runs first (the paper preset clears tool results first)."""
    strategies: Strategies = Strategies()

    def budget(self, max_output_tokens: int) -> Budget:
        window = self.max_context_tokens
        margin = default_margin(window) if self.margin is None else self.margin
        return Budget(window, self.output_reserve or max_output_tokens, margin)

    def enabled(self) -> tuple[str, ...]:
        """The strategies switched on, by name, in evaluation order."""
        names = [n for n in STRATEGY_KINDS if getattr(self.strategies, n) is not None]
        if self.order == "tools_first" and "clear_thinking" in names \
                and "clear_tool_results" in names:
            names[0], names[1] = names[1], names[0]
        return tuple(names)

    @property
    def label(self) -> str:
        """`react` or the enabled strategies joined by `+`."""
        return "+".join(self.enabled()) or "react"

    def check(self, max_output_tokens: int) -> list[str]:
        """The validation rules (see docs/concepts/context.md) that need B; raises `ValueError`
        naming the fields, returns warnings."""
        budget = self.budget(max_output_tokens)
        if budget.reserve >= budget.window:
            raise ValueError(f"output reserve R={budget.reserve} must be below the context window "
                             f"max_context_tokens W={budget.window}")
        if budget.input_budget <= 0:
            raise ValueError(f"input budget B = W - R - M = {budget.input_budget} is not positive "
                             f"(max_context_tokens, output_reserve, margin)")
        s = self.strategies
        triggers = {name: getattr(s, name).trigger for name in ("clear_thinking",
                                                                 "clear_tool_results", "compaction")
                    if getattr(s, name) is not None and getattr(s, name).trigger != "always"}
        for name, trigger in triggers.items():
            budget.check_trigger(f"{name}.trigger", trigger)
        _check_shadowing(budget, triggers)
        if s.compaction is not None and s.compaction.summary_max_tokens > budget.input_budget // 4:
            raise ValueError(f"compaction.summary_max_tokens={s.compaction.summary_max_tokens} is "
                             f"above 0.25 B = {budget.input_budget // 4}")
        if s.awareness is not None:
            _check_awareness(s.awareness, budget, triggers)
        return _warnings(budget, triggers, s)

    def check_model(self, reasoning_echo: ReasoningEcho) -> None:
        """Rules that depend on how the model client echoes reasoning (see docs/concepts/context.md)."""
        thinking = self.strategies.clear_thinking
        if thinking is None:
            return
        if reasoning_echo == "none":
            raise ValueError("clear_thinking has nothing to clear: the client never echoes "
                             "reasoning (reasoning_echo: none)")
        if reasoning_echo == "current_turn" and thinking.keep_last_turns == 0:
            raise ValueError("clear_thinking.keep_last_turns: 0 strips reasoning the provider "
                             "needs in the current turn (reasoning_echo: current_turn)")


def _check_shadowing(budget: Budget, triggers: dict[str, Trigger]) -> None:
    compaction = triggers.get("compaction")
    if compaction is None:
        return
    for name in ("clear_thinking", "clear_tool_results"):
        if name in triggers and budget.tokens(compaction) < budget.tokens(triggers[name]):
            raise ValueError(f"compaction.trigger ({compaction}) is below {name}.trigger "
                             f"({triggers[name]}): the clearing would almost never run")


def _check_awareness(awareness: AwarenessConfig, budget: Budget,
                     triggers: dict[str, Trigger]) -> None:
    shown = awareness.budget_shown
    if isinstance(shown, int) and not 0 < shown <= budget.window:
        raise ValueError(f"awareness.budget_shown={shown} must be in (0, W={budget.window}]")
    if shown == "trigger" and not {"clear_tool_results", "compaction"} & set(triggers):
        raise ValueError("awareness.budget_shown: trigger needs clear_tool_results or compaction")


def _warnings(budget: Budget, triggers: dict[str, Trigger], s: Strategies) -> list[str]:
    out = []
    if budget.reserve > budget.input_budget:
        out.append(f"the output reserve takes more of the window than the input may: "
                   f"{budget.describe()}; set context.output_reserve (or a smaller output limit) "
                   f"to leave the requests more room")
    if not s.truncate.enabled and s.compaction is None:
        out.append("hard truncation is disabled and compaction is off: any request over the "
                   "input budget ends the episode context_overflow")
    names = sorted(triggers)
    for i, a in enumerate(names):
        for b in names[i + 1:]:
            ta, tb = budget.tokens(triggers[a]), budget.tokens(triggers[b])
            if ta != tb and abs(ta - tb) <= 0.05 * max(ta, tb):
                out.append(f"{a}.trigger and {b}.trigger are within 5 % of each other")
    return out
