"""LOCA tasks under inspect_ai (the `inspect` extra): `inspect eval loca/<task> -T length=32k
-T seeds=0-4 --model ...`. A sample is one (length, seed) world, reset afresh; the default solver
is inspect's ReAct agent over the task's tools, `-T solver=loca` the gym's own loop and context
strategies under inspect's model providers; the scorer is the task's checker."""

from __future__ import annotations

try:
    import inspect_ai  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the environment
    raise ImportError("the inspect integration needs inspect_ai: pip install 'loca-gym[inspect]'") from exc

from loca.integrations.inspect.scorer import loca_checker
from loca.integrations.inspect.solvers import loca_loop, loca_react, loca_world
from loca.integrations.inspect.tasks import loca_task

__all__ = ["loca_checker", "loca_loop", "loca_react", "loca_task", "loca_world"]
