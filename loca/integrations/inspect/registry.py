"""Registers every LOCA task with inspect as `loca/<task>`: the entry point `loca` of the group
`inspect_ai` names this module, so `inspect eval loca/<task>` finds the tasks."""

from __future__ import annotations

from inspect_ai import task
from inspect_ai.util import registry_info

from envs.core.registry import tasks
from loca.integrations.inspect.tasks import task_factory

NAMESPACE = "loca"


def register_tasks() -> list[str]:
    """Register every task; the names registered. inspect puts an installed package's name in
    front of the names it registers, but not for a source checkout installed in editable mode
    under a distribution named otherwise (`loca-gym`): the namespace is then given."""
    names = []
    for name in tasks():
        registered = registry_info(task(name=name)(task_factory(name))).name
        if "/" not in registered:
            registered = registry_info(task(name=f"{NAMESPACE}/{name}")(task_factory(name))).name
        names.append(registered)
    return names


REGISTERED = register_tasks()
