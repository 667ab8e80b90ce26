"""Names of the environment API that the scaffold relies on: the action that ends an episode
with a text answer, and the keys of `reset`'s info that describe the episode's world."""

from __future__ import annotations

FINAL = "__final__"
"""The action `{"name": FINAL, "arguments": {"text": ...}}` grades the world as it stands and
ends the episode (an agent that answers in text instead of calling the terminal tool)."""
WORLD_INFO_KEYS = ("task", "task_version", "seed", "params", "target_tokens",
                   "env_description_tokens", "builds", "world_hash", "world_dir", "terminal_tool",
                   "tool_count", "tools_tokens")
"""The keys of `reset`'s info that describe the episode and its world, which an episode's
trajectory and record keep; the others (tool schemas, names, timings) describe the serving."""
