"""Context awareness (see docs/concepts/context.md): a budget notice once, a usage note after each tool batch."""

from __future__ import annotations

from scaffolds.budget import Budget
from scaffolds.context.config import AwarenessConfig, Strategies
from scaffolds.prompts import get_prompt

BUDGET_PROMPT = "awareness/budget@1"
USAGE_PROMPT = "awareness/usage@1"


def budget_shown(config: AwarenessConfig, budget: Budget, strategies: Strategies) -> int:
    """N, the budget the notices state."""
    shown = config.budget_shown
    if isinstance(shown, int):
        return shown
    if shown == "window":
        return budget.window
    if shown == "input_budget":
        return budget.input_budget
    triggers = [s.trigger for s in (strategies.clear_tool_results, strategies.compaction)
                if s is not None]
    return min(budget.tokens(t) for t in triggers)


def budget_notice(shown: int) -> str:
    return get_prompt(BUDGET_PROMPT).render(budget=shown)


def usage_note(used: int, shown: int) -> str:
    return get_prompt(USAGE_PROMPT).render(used=used, budget=shown, remaining=shown - used)
