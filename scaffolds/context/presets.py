"""Strategy sets by name (`react`, `clear_tool_results+compaction`, `paper+...`) and config files
(see docs/concepts/context.md).

`react` is no strategy beyond hard truncation. `paper` sets the paper's settings for the
strategies named with it, plus its system prompt and sampling. A config file (YAML, or JSON by
its `.json` suffix) holds the `context` section (`max_context_tokens`, `order`, `strategies`,
...) and optionally `strategy`, the names; the names given on the command line win.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from scaffolds.context.config import STRATEGY_KINDS, ContextConfig

PRESETS = ("react", "paper")
PAPER_TRIGGER = 0.75
"""The one trigger the paper preset shares between every reset strategy."""
PAPER_CONTEXT: dict[str, Any] = {
    "max_context_tokens": 128_000,
    "order": "tools_first",
    "strategies": {
        "clear_tool_results": {"trigger": PAPER_TRIGGER, "unit": "turn", "clear_fraction": 0.5,
                               "style": "remove"},
        "clear_thinking": {"trigger": PAPER_TRIGGER, "keep_last_turns": 1},
        "compaction": {"trigger": PAPER_TRIGGER, "temperature": 0.7},
        "awareness": {"keep_notes": "all", "budget_shown": "window"},
        "memory": {"warn_fraction": 0.5, "naming": "paper"},
        "ptc": {"naming": "paper"},
    },
}
PAPER_AGENT = {"system_prompt": "system/none@1", "temperature": 1.0, "top_p": 1.0}


@dataclass(frozen=True)
class StrategyChoice:
    """A resolved `--strategy` / `--strategy-config`: the context section and, for the paper
    preset, the agent settings it implies (None: leave the defaults)."""

    name: str
    context: ContextConfig
    agent: Mapping[str, Any] | None = None


def parse_names(spec: str) -> tuple[bool, tuple[str, ...]]:
    """(`paper` named, strategy kinds) of `a+b+...`; raises `ValueError` on a bad name."""
    names = [n.strip() for n in spec.split("+")]
    if any(not n for n in names):
        raise ValueError(f"--strategy {spec!r}: empty name (names are joined by '+')")
    for name in names:
        if name not in (*PRESETS, *STRATEGY_KINDS):
            raise ValueError(f"unknown strategy {name!r}; known: "
                             f"{', '.join((*PRESETS, *STRATEGY_KINDS))}")
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"--strategy {spec!r} names {', '.join(duplicates)} twice")
    kinds = tuple(n for n in names if n in STRATEGY_KINDS)
    if "react" in names and len(names) > 1:
        raise ValueError(f"--strategy {spec!r}: react means no strategy; it combines with none")
    return "paper" in names, kinds


def load_file(path: Path) -> dict[str, Any]:
    """A strategy config file as a mapping."""
    text = path.read_text(encoding="utf-8")
    try:
        data = json.loads(text) if path.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise ValueError(f"{path}: not valid {'JSON' if path.suffix == '.json' else 'YAML'}: "
                         f"{exc}") from None
    if not isinstance(data, dict) or set(data) - {"strategy", "context"}:
        raise ValueError(f"{path}: expected a mapping with `context` and optionally `strategy`")
    return data


def choose(spec: str | None, file: Mapping[str, Any] | None = None) -> StrategyChoice:
    """Resolve strategy names and a config file's contents into one `StrategyChoice`."""
    file = file or {}
    section = dict(file.get("context") or {})
    tuned = dict(section.pop("strategies", None) or {})
    spec = spec or file.get("strategy") or "+".join(k for k in STRATEGY_KINDS if k in tuned) \
        or "react"
    paper, kinds = parse_names(spec)
    stray = sorted(set(tuned) - {*kinds, "truncate"})
    if stray:
        raise ValueError(f"context.strategies tunes {', '.join(stray)}, which --strategy "
                         f"{spec!r} does not enable")
    base = PAPER_CONTEXT if paper else {}
    strategies = {k: {**base.get("strategies", {}).get(k, {}), **(tuned.get(k) or {})}
                  for k in kinds}
    if "truncate" in tuned:
        strategies["truncate"] = tuned["truncate"]
    merged = {**{k: v for k, v in base.items() if k != "strategies"}, **section,
              "strategies": strategies}
    return StrategyChoice(name=spec, context=ContextConfig.model_validate(merged),
                          agent=PAPER_AGENT if paper else None)
