"""Token counts of messages and tool schemas (cl100k_base, computed once per item).

Counts cover what the model reads: text, reasoning, tool-call names and raw arguments, tool
result content. Per-message wire framing is not modelled.
"""

from __future__ import annotations

from loca.core.tokens import count_tokens
from scaffolds.messages import Message, ReasoningPart, TextPart, ToolCallPart


def message_tokens(message: Message) -> int:
    if message.role == "tool":
        return count_tokens(message.content or "")
    total = 0
    for part in message.parts:
        if isinstance(part, (TextPart, ReasoningPart)):
            total += count_tokens(part.text)
        elif isinstance(part, ToolCallPart):
            total += count_tokens(part.name) + count_tokens(part.arguments_raw)
    return total

