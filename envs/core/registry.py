"""The task registry. Every top-level module of `envs/` that defines `TASK` (a `TaskSpec`) is a
task; its generator (`generators/<task>`) and checker (`checkers/<task>.py`) are the modules named
after it, imported on first use. Discovery imports only the light spec modules, so listing tasks
and registering their gym ids is cheap."""

from __future__ import annotations

import importlib
import pkgutil
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from loca.core.task import TaskSpec

if TYPE_CHECKING:
    from checkers.kit import Checks
    from checkers.verdict import Verdict
    from loca.core.world import World


@dataclass(frozen=True)
class Task:
    """A registered task: its spec, and its generator and checker found by name."""

    spec: TaskSpec

    @property
    def name(self) -> str:
        return self.spec.name

    @cached_property
    def generator(self) -> ModuleType:
        """`generators.<task>`: `generate(root, params, seed, target_tokens)`, `resolve_params`,
        `VERSION`, and optionally `length_features(params, seed)`."""
        return importlib.import_module(f"generators.{self.name}")

    @cached_property
    def checks(self) -> Checks:
        """`checkers.<task>.CHECKS`: the task's named checks."""
        checks: Checks = importlib.import_module(f"checkers.{self.name}").CHECKS
        return checks

    @property
    def generator_version(self) -> str:
        return str(self.generator.VERSION)

    @property
    def generator_dir(self) -> Path:
        """The generator's folder (its templates and calibration table live there), found
        without importing it."""
        found = importlib.util.find_spec(f"generators.{self.name}")
        if found is None or not found.submodule_search_locations:
            raise LookupError(f"task {self.name} has no generator package generators/{self.name}/")
        return Path(next(iter(found.submodule_search_locations)))

    def generate(self, root: Path, params: dict[str, Any], seed: int,
                 target_tokens: int | None = None) -> World:
        """Build the world of (params, seed) at `root` (replacing anything there)."""
        world: World = self.generator.generate(root, params, seed, target_tokens)
        return world

    def length_features(self, params: dict[str, Any], seed: int) -> tuple[float, ...] | None:
        """What the world of (params, seed) will hold, sketched without building it (counts and
        text sizes), from the generator's optional `length_features`; None when it has none."""
        sketch = getattr(self.generator, "length_features", None)
        return None if sketch is None else tuple(float(x) for x in sketch(params, seed))

    def resolve_params(self, params: dict[str, Any]) -> dict[str, int]:
        """`params` validated, with the derived parameters filled in."""
        resolved: dict[str, int] = self.generator.resolve_params(params)
        return resolved

    def check(self, world: World) -> Verdict:
        return self.checks.run(world)


@lru_cache(maxsize=1)
def tasks() -> dict[str, Task]:
    """Every registered task, by name."""
    import envs

    found: dict[str, Task] = {}
    for info in pkgutil.iter_modules(envs.__path__):
        if info.ispkg:
            continue
        spec = getattr(importlib.import_module(f"envs.{info.name}"), "TASK", None)
        if isinstance(spec, TaskSpec):
            if spec.name != info.name:
                raise ValueError(f"envs/{info.name}.py declares task {spec.name!r}; name the module after it")
            found[spec.name] = Task(spec)
    return dict(sorted(found.items()))


def get_task(name: str) -> Task:
    registry = tasks()
    if name not in registry:
        raise KeyError(f"unknown task '{name}'; known: {', '.join(registry) or 'none'}")
    return registry[name]


def register_gym_ids() -> None:
    """Register `loca/<TaskName>-v<k>` for every task on the one env class."""
    from gymnasium.envs.registration import register, registry

    for task in tasks().values():
        if task.spec.env_id not in registry:
            register(id=task.spec.env_id, entry_point="envs.core.env:LocaEnv", kwargs={"task": task.name})
