"""The task's checker as an inspect scorer: 1 when the episode was graded and every named check
passed, else 0, exactly as the runner scores (an episode the agent never ended is not graded;
its world's checks are reported as a diagnostic that never scores)."""

from __future__ import annotations

from typing import Any

from inspect_ai.scorer import Score, Target, accuracy, scorer, stderr
from inspect_ai.scorer import Scorer as InspectScorer
from inspect_ai.solver import TaskState

from checkers.verdict import Verdict
from loca.integrations.inspect.episodes import Outcome, live_episode


def outcome_score(outcome: Outcome) -> Score:
    """The score of an outcome; its metadata names every check."""
    verdict = outcome.verdict if outcome.graded else outcome.diagnostic
    metadata: dict[str, Any] = {
        "graded": outcome.graded,
        "terminal_state": outcome.terminal_state,
        "checks": [check.model_dump() for check in verdict.checks] if verdict else [],
    }
    return Score(value=1 if outcome.success else 0, answer=outcome.terminal_state,
                 explanation=_explain(outcome.graded, verdict), metadata=metadata)


def _explain(graded: bool, verdict: Verdict | None) -> str:
    if verdict is None:
        return "not graded"
    failed = verdict.failed_names()
    checks = f"every check passed ({len(verdict.checks)})" if not failed else f"failed: {', '.join(failed)}"
    return checks if graded else f"not graded: the agent did not end the episode (diagnostic: {checks})"


@scorer(metrics=[accuracy(), stderr()])
def loca_checker() -> InspectScorer:
    """The task's rule-based checker on the sample's final world."""

    async def score(state: TaskState, target: Target) -> Score:
        return outcome_score(live_episode(state.uuid).settled())

    return score
