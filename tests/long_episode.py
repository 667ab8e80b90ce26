"""A run directory holding one synthetic episode of a given trajectory size (a 2M-token one for
the viewer), written with the runner's record models and ledger."""

from __future__ import annotations

import json
from pathlib import Path

from loca.records import Episode, EpisodeRecord
from loca.records.load import EPISODES, MANIFEST, RUN_JSON
from loca.records.models import RunManifest
from scaffolds.ledger import Ledger
from scaffolds.messages import ToolCallPart, assistant_message, system_message, tool_message, user_message

RESULT_TOKENS = 1000
"""Each turn reads one page of about this many tokens."""


def write_long_run(root: Path, tokens: int) -> tuple[Path, str]:
    """A run of one finished episode whose ledger holds at least `tokens` message tokens; the
    run directory and the episode's id."""
    planned = Episode("toy", tokens, 0, "oracle")
    eid = planned.episode_id
    trajectory = root / "episodes" / eid / "trajectory.jsonl"
    trajectory.parent.mkdir(parents=True)
    ledger = Ledger(trajectory, {"format": "loca.trajectory/1",
                                 "env": {"task": "toy", "task_version": 0}})
    ledger.append_message(system_message("Act through the tools."), turn=0)
    ledger.append_message(user_message(["Read every page."], "task"), turn=0)
    ledger.record("tools", {"tools": [{"name": "read"}], "tokens": 40})
    body = " ".join(f"w{i % 997}" for i in range(RESULT_TOKENS // 2))
    turn = 0
    while ledger.message_tokens_total < tokens:
        turn += 1
        ledger.record("llm_request", {"turn": turn, "purpose": "main", "fired": [],
                                      "predicted_tokens": ledger.message_tokens_total + 40,
                                      "view_messages": len(ledger.messages)})
        call = ToolCallPart.parse(f"c{turn}", "read", f'{{"page": {turn}}}')
        ledger.append_message(assistant_message(f"Page {turn} next.", [call]), turn=turn)
        ledger.append_message(tool_message(call.call_id, "read", f"page {turn}: {body}"), turn=turn)
    ledger.record("terminal", {"state": "claimed_done", "error": None})
    ledger.close()
    record = EpisodeRecord(**planned.to_dict(), terminal_state="claimed_done", success=True,
                           graded=True, reward=1.0, strategy="react",
                           trajectory=str(trajectory.relative_to(root)))
    (root / RUN_JSON).write_text(RunManifest(config={"agent": "oracle", "strategy": "react"})
                                 .model_dump_json())
    (root / MANIFEST).write_text(json.dumps(planned.to_dict()) + "\n")
    (root / EPISODES).write_text(json.dumps(record.to_dict()) + "\n")
    return root, eid
