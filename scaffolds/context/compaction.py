"""Compaction (see docs/concepts/context.md): a summary call through the same client, the summary pinned.

The request is the current view (cut to the summary call's own budget if needed) plus the
compaction prompt. A valid summary (long enough, not cut off, not an error) is appended to the
ledger as a user message (`origin=strategy.compaction`) and everything but the task, the summary
and `keep_recent_turns` turn groups leaves the view. A summary no smaller than what it would
replace is discarded (the view stays, the cooldown starts), so a compaction never grows the
request. After `attempts` failures the fallback applies: hard truncation with a cooldown, or
`context_overflow`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from loca.core.tokens import count_tokens
from scaffolds.accounting import message_tokens
from scaffolds.budget import Budget
from scaffolds.clients.base import GenerateRequest, LLMCallError, ModelClient, Sampling
from scaffolds.context.config import CompactionConfig
from scaffolds.context.summarizer import DigestSummarizer
from scaffolds.context.truncate import Overflow
from scaffolds.context.view import Renderer, runs_of, view_hash
from scaffolds.ledger import Ledger
from scaffolds.messages import Message, ReasoningPart, user_message
from scaffolds.prompts import get_prompt


class Compactor:
    def __init__(self, config: CompactionConfig, client: ModelClient, sampling: Sampling,
                 tools: Sequence[Mapping[str, Any]], *, scripted: bool = False) -> None:
        """`scripted`: the agent is scripted, so an unset `summarizer` means the digest."""
        self.config = config
        digest = config.summarizer == "scripted" or (config.summarizer is None and scripted)
        self.client: ModelClient = DigestSummarizer() if digest else client
        self.sampling = Sampling(
            temperature=sampling.temperature if config.temperature is None else config.temperature,
            top_p=sampling.top_p, seed=sampling.seed,
            max_output_tokens=config.summary_max_tokens)
        self.tools = [] if config.tools_mode == "omit" else list(tools)
        self.cooldown_until = 0

    def wants(self, renderer: Renderer, budget: Budget, turn: int) -> bool:
        """Over the trigger, out of cooldown, with at least one turn group to summarise."""
        return (turn >= self.cooldown_until and budget.over(renderer.predicted, self.config.trigger)
                and len(renderer.groups()) > self.config.keep_recent_turns)

    async def run(self, ledger: Ledger, renderer: Renderer, budget: Budget, turn: int,
                  record: Callable[..., None]) -> None:
        """One compaction; records its calls and its decision (`compact` or `failed`)."""
        groups = renderer.groups()
        kept = [e.mid for g in groups[len(groups) - self.config.keep_recent_turns:] for e in g] \
            if self.config.keep_recent_turns else []
        messages, predicted, refs = self._request(renderer, budget)
        problems: list[str] = []
        for attempt in range(1, self.config.attempts + 1):
            summary, problem = await self._summarise(ledger, messages, predicted, refs, turn,
                                                     attempt)
            if summary is not None:
                self._adopt(ledger, renderer, summary, kept, turn, attempt, record)
                return
            problems.append(problem or "")
        record("compaction", "failed", turn, {}, problems=problems)
        if self.config.fallback == "fail":
            raise Overflow(f"compaction failed {len(problems)} times: {problems[-1]}")
        self.cooldown_until = turn + self.config.cooldown_turns + 1

    def _request(self, renderer: Renderer,
                 budget: Budget) -> tuple[tuple[Message, ...], int, tuple[list[Any], ...]]:
        """The view cut (oldest turn groups first) to the summary call's budget, plus the prompt."""
        limit = budget.window - self.config.summary_max_tokens - budget.margin
        prompt = user_message([get_prompt(self.config.prompt).text], "harness.prompt")
        predicted = renderer.predicted + count_tokens(prompt.text)
        dropped: set[int] = set()
        for group in renderer.groups()[:-1]:
            if predicted <= limit:
                break
            dropped.update(e.mid for e in group)
            predicted -= sum(e.tokens for e in group)
        view = [e for e in renderer.entries.values() if e.mid not in dropped]
        refs = tuple(runs_of(view)) if dropped else renderer.refs()
        return (*(e.message for e in view), prompt), predicted, refs

    async def _summarise(self, ledger: Ledger, messages: tuple[Message, ...], predicted: int,
                         refs: tuple[list[Any], ...], turn: int,
                         attempt: int) -> tuple[Message | None, str | None]:
        ledger.record("llm_request", {"turn": turn, "purpose": "compaction", "attempt": attempt,
                                      "view": refs, "view_hash": view_hash(refs),
                                      "predicted_tokens": predicted,
                                      "prompt": self.config.prompt})
        request = GenerateRequest(messages=messages, tools=self.tools,
                                  tool_choice="none" if self.tools else "auto",
                                  sampling=self.sampling, purpose="compaction",
                                  predicted_input_tokens=predicted)
        try:
            result = await self.client.generate(request)
        except LLMCallError as exc:
            ledger.record_retries(turn, exc.attempts[:-1])
            return None, f"{exc.error_class}: {exc.message}"
        ledger.record_retries(turn, result.attempts[:-1])
        ledger.record("llm_response", {
            "turn": turn, "purpose": "compaction", "mid": None,
            "finish_reason": result.finish_reason, "usage": result.usage.to_dict(),
            "latency_s": result.latency_s, "ttft_s": result.ttft_s,
            "attempts": len(result.attempts), "request_id": result.request_id,
            "cost_usd": result.cost_usd, "cost_source": result.cost_source,
        })
        text = result.message.text.strip()
        if result.finish_reason == "length":
            return None, "the summary was cut off at its output limit"
        if result.message.tool_calls:
            return None, "the summary reply called tools"
        if count_tokens(text) < self.config.min_summary_tokens:
            return None, f"the summary is shorter than {self.config.min_summary_tokens} tokens"
        return result.message, None

    def _adopt(self, ledger: Ledger, renderer: Renderer, reply: Message, kept: list[int],
               turn: int, attempt: int, record: Callable[..., None]) -> None:
        """Pin the summary in place of the history, unless it is no smaller than what it would
        replace: then the view stays as it is (`discarded`) and the cooldown starts."""
        preamble = get_prompt(self.config.preamble).text
        before = renderer.predicted
        summary = user_message([preamble, reply.text.strip()], "strategy.compaction")
        size = message_tokens(summary)
        keep = set(kept)
        hide = [mid for mid, e in renderer.entries.items() if e.turn != 0 and mid not in keep]
        replaced = sum(renderer.entries[mid].tokens for mid in hide)
        if size >= replaced:
            record("compaction", "discarded", turn, {}, attempt=attempt, summary_tokens=size,
                   replaced_tokens=replaced, summary=reply.text.strip(),
                   reason="the summary is not smaller than the messages it would replace")
            self.cooldown_until = turn + self.config.cooldown_turns + 1
            return
        pinned = ledger.append_message(summary, turn=turn - 1, tokens=size)
        reasoning = [p.text for p in reply.parts if isinstance(p, ReasoningPart)]
        record("compaction", "compact", turn, {"hide": hide, "pin": [pinned.mid], "to_end": kept},
               before=before, summary_mid=pinned.mid, attempt=attempt,
               summary_reasoning=reasoning or None)
