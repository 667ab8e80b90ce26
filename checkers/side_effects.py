"""`no_side_effects`, made from the task's spec for every task: nothing changed but the task's
writable set. Every table of the task's servers is compared with the snapshot frozen at
generation, exactly as stored (rows changed, deleted or added, tables created or dropped,
catalog rows such as columns, comments, datasets, tabs and folders included); only the rows of
the task's footprint may differ, as it says. Workspace input files must keep their bytes
(moved, deleted or appended files count); new scratch files are allowed. Where the task sends
mail, the copies of what it sent must stay where they were delivered, as sent."""

from __future__ import annotations

from checkers.kit import CheckFn, Context, fail_on
from checkers.mail import copies_problems
from loca.core.outputs import SentMail
from loca.core.task import TaskSpec
from mock_servers import snapshot_rules
from mock_servers.core import snapshot


def no_side_effects(spec: TaskSpec) -> CheckFn:
    """The check: every change outside the task's writable set is a problem."""
    sends = any(isinstance(o, SentMail) for o in spec.outputs)
    rules = snapshot_rules(list(spec.servers.values()), spec.footprint, spec.writable_files)

    def check(ctx: Context) -> str:
        before = snapshot.Snapshot.model_validate(ctx.world.read_truth("snapshot.json"))
        problems = snapshot.changes(ctx.world, before, rules)
        if sends:
            problems += copies_problems(ctx)
        fail_on(problems)
        return "nothing outside the task's writable set changed"

    return check
