"""A scripted summariser for compaction in offline runs: a deterministic digest of the view.

It answers the compaction request like a model would (same interface, synthesised usage), with
one line per tool call of the summarised messages and the start of each result.
"""

from __future__ import annotations

from scaffolds.clients.base import Attempt, GenerateRequest, GenerateResult, estimated_usage
from scaffolds.messages import Message, assistant_message

RESULT_CHARS = 160
CHARS_PER_TOKEN = 3
"""A conservative estimate used to keep the digest under the summary's output limit."""


class DigestSummarizer:
    async def generate(self, request: GenerateRequest) -> GenerateResult:
        history = [m for m in request.messages[:-1] if m.origin not in ("task", "harness.prompt")]
        text = digest(history, request.sampling.max_output_tokens * CHARS_PER_TOKEN)
        message = assistant_message(text)
        return GenerateResult(message=message, finish_reason="stop",
                              usage=estimated_usage(request, message), attempts=(Attempt(1, "ok"),))


def digest(history: list[Message], max_chars: int) -> str:
    """Tool calls with the start of their results, and other texts, capped at `max_chars`."""
    lines = [f"Progress so far, digested from {len(history)} earlier messages:"]
    for message in history:
        if message.role == "tool":
            content = " ".join((message.content or "").split())
            lines.append(f"  -> {'error: ' if message.is_error else ''}{content[:RESULT_CHARS]}")
            continue
        lines.extend(f"- called {c.name}({c.arguments_raw})" for c in message.tool_calls)
        if message.text.strip():
            lines.append(f"- {message.role}: {' '.join(message.text.split())[:RESULT_CHARS]}")
    text = "\n".join(lines)
    return text if len(text) <= max_chars else text[:max_chars - 1] + "…"
