"""The task registry. Every top-level module of `envs/` that defines `TASK` (a `TaskSpec`) is a
task; its generator (`generators/<task>`), checker (`checkers/<task>.py`) and scripted agents
(`scaffolds/oracles/<task>.py`) are the modules named after it, imported on first use. Discovery
imports only the light spec modules, so listing tasks and registering their gym ids is cheap.

Extra tasks live outside the shipped tree (a toy task for tests of the shared machinery, a task
under development): a package defining `TASK`, with the submodules `generator` (a package: its
folder holds the calibration table), `checker` and `agents`. `register_task(package)` adds one to
this process; the environment variable `LOCA_EXTRA_TASKS` (package names, comma-separated;
`envs.core.extra`) adds them to every process that inherits it, child processes included. An extra task is found by name
(`get_task`: the CLI's `--tasks NAME`, `generate`, `validate NAME`, the env) but is never listed:
`tasks()`, and so `loca tasks`, `all` and the acceptance suite, hold the shipped tasks only."""

from __future__ import annotations

import importlib
import pkgutil
import sys
from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from envs.core.extra import Part, add_extra, extras, module_name
from loca.core.task import TaskSpec

if TYPE_CHECKING:
    from checkers.kit import Checks
    from checkers.verdict import Verdict
    from loca.core.world import World


@dataclass(frozen=True)
class Task:
    """A registered task: its spec, and its generator and checker found by name. `package`: an
    extra task's package (None for a shipped task)."""

    spec: TaskSpec
    package: str | None = None

    @property
    def name(self) -> str:
        return self.spec.name

    def module_name(self, part: Part) -> str:
        """The module of the task's generator, checker or scripted agents (`envs.core.extra`)."""
        return module_name(self.name, self.package, part)

    @cached_property
    def generator(self) -> ModuleType:
        """The generator module: `generate(root, params, seed, target_tokens)`, `resolve_params`,
        `VERSION`, and optionally `length_features(params, seed)`."""
        return importlib.import_module(self.module_name("generator"))

    @cached_property
    def checks(self) -> Checks:
        """The checker module's `CHECKS`: the task's named checks."""
        checks: Checks = importlib.import_module(self.module_name("checker")).CHECKS
        return checks

    @property
    def generator_version(self) -> str:
        return str(self.generator.VERSION)

    @property
    def generator_dir(self) -> Path:
        """The generator's folder (its templates and calibration table live there), found
        without importing it."""
        module = self.module_name("generator")
        found = importlib.util.find_spec(module)
        if found is None or not found.submodule_search_locations:
            raise LookupError(f"task {self.name} has no generator package {module}")
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
    """Every shipped task, by name (extra tasks are left out)."""
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


_extra: dict[str, Task] = {}


def register_task(package: str) -> Task:
    """Add the extra task of `package` (its `TASK`) to this process; registering it again is a
    no-op. Its gym id is registered too (now when gymnasium is imported, else when it is)."""
    spec = add_extra(package)
    if "gymnasium" in sys.modules:
        register_gym_ids()
    return extra_tasks()[spec.name]


def extra_tasks() -> dict[str, Task]:
    """The extra tasks of this process: those of `LOCA_EXTRA_TASKS` and those registered."""
    return {name: _extra.setdefault(name, Task(spec, package)) for name, (package, spec) in extras().items()}


def get_task(name: str) -> Task:
    """The shipped or extra task `name`."""
    registry = tasks()
    if name in registry:
        return registry[name]
    extra = extra_tasks()
    if name not in extra:
        raise KeyError(f"unknown task '{name}'; known: {', '.join(registry) or 'none'}")
    return extra[name]


def register_gym_ids() -> None:
    """Register `loca/<TaskName>-v<k>` for every task (shipped and extra) on the one env class."""
    from gymnasium.envs.registration import register, registry

    for task in [*tasks().values(), *extra_tasks().values()]:
        if task.spec.env_id not in registry:
            register(id=task.spec.env_id, entry_point="envs.core.env:LocaEnv", kwargs={"task": task.name})
