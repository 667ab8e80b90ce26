"""Gymnasium environments: one module per task holds its `TaskSpec`; one env class
(`envs.core.env.LocaEnv`) serves them all. Importing this package registers every task as
`loca/<TaskName>-v<version>` with gymnasium: at once when gymnasium is already imported, else the
moment it is (an import hook), so that listing tasks never pays for importing gymnasium."""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

from envs.core.registry import register_gym_ids


class _RegisterWithGymnasium(importlib.abc.MetaPathFinder):
    """Finds nothing itself: when gymnasium is first imported, it lets the other finders find it
    and registers the task ids right after the module has run."""

    def find_spec(self, name: str, path: Sequence[str] | None, target: ModuleType | None = None,
                  ) -> ModuleSpec | None:
        if name != "gymnasium":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module

        def run_then_register(module: ModuleType) -> None:
            run(module)
            register_gym_ids()

        spec.loader.exec_module = run_then_register  # type: ignore[method-assign]
        return spec


if "gymnasium" in sys.modules:
    register_gym_ids()
elif not any(isinstance(f, _RegisterWithGymnasium) for f in sys.meta_path):
    sys.meta_path.insert(0, _RegisterWithGymnasium())
