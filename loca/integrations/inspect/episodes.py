"""The world of one inspect sample: the task's env reset as `loca run` resets it (from the world
cache when it holds the world, else built and stored there), each sample in its own folder, so
samples and epochs share no state. It is kept by the sample's uuid from the setup step to the
scorer, and closed by the task's cleanup."""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from checkers.verdict import Verdict
from envs.core.env import LocaEnv
from mock_servers.gateway import ToolFilter
from scaffolds.loop import ENDED_TEXT


class SampleWorld(BaseModel):
    """What a sample's metadata says about its world."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    task: str
    length: int = Field(gt=0)
    """Target environment length in tokens."""
    seed: int = Field(ge=0)


class Outcome(BaseModel):
    """How the episode ended, as the runner records it: graded when the agent claimed done
    (or, in the gym's loop, ended with a text reply); a diagnostic verdict otherwise, which never
    scores."""

    graded: bool
    terminal_state: str | None = None
    """The gym loop's terminal state, `claimed_done` for the completion tool, or None when the
    agent stopped without ending the episode (a limit, an error)."""
    verdict: Verdict | None = None
    diagnostic: Verdict | None = None

    @property
    def success(self) -> bool:
        return self.graded and self.verdict is not None and self.verdict.passed


@dataclass
class LiveEpisode:
    """A reset env and what its reset returned."""

    env: LocaEnv
    folder: Path
    world: SampleWorld
    instruction: str
    info: dict[str, Any]
    outcome: Outcome | None = field(default=None)

    @property
    def tools(self) -> list[dict[str, Any]]:
        """The exposed tools: `{"name", "description", "parameters"}`."""
        tools: list[dict[str, Any]] = self.info["tools"]
        return tools

    @property
    def terminal_tool(self) -> str:
        return str(self.info["terminal_tool"])

    async def call(self, name: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        """One tool call: (output text, is_error). The completion tool grades the world and
        ends the episode; a call after the end is not executed."""
        if self.outcome is not None and self.outcome.graded:
            return ENDED_TEXT, True
        text, _reward, terminated, _truncated, info = await self.env.astep(
            {"id": None, "name": name, "arguments": arguments})
        if terminated:
            self.outcome = Outcome(graded=True, terminal_state="claimed_done",
                                   verdict=Verdict.model_validate(info["verdict"]))
        return text, bool(info.get("is_error"))

    def settled(self) -> Outcome:
        """The outcome; an episode the agent never ended gets the diagnostic verdict of its
        world as it stands."""
        if self.outcome is None:
            self.outcome = Outcome(graded=False, diagnostic=self.env.evaluate())
        return self.outcome


_LIVE: dict[str, LiveEpisode] = {}


async def open_episode(key: str, world: SampleWorld, tool_filter: ToolFilter = "task") -> LiveEpisode:
    """Reset a fresh env for `world` in a folder of its own, kept under `key`."""
    if key in _LIVE:
        raise RuntimeError(f"sample {key} already has a world")
    folder = Path(tempfile.mkdtemp(prefix=f"loca-inspect-{world.task}-"))
    env = LocaEnv(world.task, length=world.length, tool_filter=tool_filter)
    try:
        instruction, info = await env.areset(seed=world.seed, options={
            "length": world.length, "episode_dir": str(folder / "world")})
    except BaseException:
        await env.aclose()
        shutil.rmtree(folder, ignore_errors=True)
        raise
    live = _LIVE[key] = LiveEpisode(env, folder, world, instruction, info)
    return live


def live_episode(key: str) -> LiveEpisode:
    """The episode of sample `key`; raises when its setup did not run."""
    try:
        return _LIVE[key]
    except KeyError:
        raise LookupError(f"sample {key} has no LOCA world: the task's setup step builds it") from None


async def close_episode(key: str) -> None:
    """Close the env of sample `key` and remove its folder (nothing when it has none)."""
    live = _LIVE.pop(key, None)
    if live is None:
        return
    try:
        await live.env.aclose()
    finally:
        shutil.rmtree(live.folder, ignore_errors=True)
