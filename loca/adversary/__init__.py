"""The generic scripted agents of a task, made from its spec alone, so that every task (and
every future one) is validated against the same adversary beside its own mutants:

- side effects, for each server with tables: a field of a row outside the footprint altered,
  such a row copied, such a row deleted; for the workspace: an input file appended to, moved,
  deleted. Each must fail `no_side_effects`.
- cover-ups, for a task with a mailbox: one extra message sent, then its Sent copy deleted for
  good or archived. Each must fail `no_side_effects`.
- answer perturbations, from the typed outputs: a table's row dropped, duplicated or invented, a
  value altered, two values of one kind swapped; a row the task writes to a service dropped,
  duplicated or altered; a templated message with two values swapped, only its values, or a
  sentence added; a message naming an invented entity id. Each must fail some check.
- allowed variants, which must pass: tables with text padded, case changed where it is free,
  numbers as text, native date cells; messages as HTML, to `Name <ADDRESS>`, subjects padded."""

from __future__ import annotations

from typing import TYPE_CHECKING

from sqlmodel import SQLModel

from loca.adversary import files, mail, state
from loca.adversary.base import ANY, PREFIX, Generic, NotApplicable, Rewrite
from loca.core.outputs import DbRows, SentMail, TableFile
from mock_servers import load_toolbox

if TYPE_CHECKING:
    from envs.core.registry import Task

__all__ = ["ANY", "PREFIX", "Generic", "NotApplicable", "Rewrite", "generic_agents"]
SIDE = "no_side_effects"


def _has_tables(server: str) -> bool:
    """Whether the server keeps tables a snapshot compares (not bookkeeping alone)."""
    toolbox = load_toolbox(server)
    return any(name.startswith(toolbox.table_prefixes) and toolbox.snapshot_ignore.get(name, frozenset()) is not None
               for name in SQLModel.metadata.tables)


def _side_effects(task: Task) -> list[Generic]:
    found = []
    for server in sorted(set(task.spec.servers.values())):
        if _has_tables(server):
            found += [
                Generic(f"side:{server}:edit", SIDE, f"alters a field of a row of {server} the task leaves alone",
                        after=state.edit_field(server)),
                Generic(f"side:{server}:add", SIDE, f"adds a copy of a row of {server} where the task adds none",
                        after=state.add_row(server)),
                Generic(f"side:{server}:delete", SIDE, f"deletes a row of {server} the task leaves alone",
                        after=state.delete_row(server))]
    found += [Generic("side:files:append", SIDE, "appends a line to a workspace input file",
                      after=files.append_to_input),
              Generic("side:files:move", SIDE, "moves a workspace input file into a folder", after=files.move_input),
              Generic("side:files:delete", SIDE, "deletes a workspace input file", after=files.delete_input)]
    if "email" in task.spec.servers.values():
        found += [Generic("cover:delete", SIDE, "sends an extra message, then deletes its Sent copy for good",
                          then=mail.cover_up(None)),
                  Generic("cover:archive", SIDE, "sends an extra message, then moves its Sent copy to Archive",
                          then=mail.cover_up("Archive"))]
    return found


def _answers(task: Task) -> list[Generic]:
    found: list[Generic] = []
    for out in task.spec.outputs:
        if isinstance(out, TableFile):
            found += [Generic(f"answer:{out.file}:{what}", ANY, about, after=files.perturbed(out, perturb))
                      for what, about, perturb in (
                          ("drop_row", "drops a row of the table", files.drop_row),
                          ("duplicate_row", "writes a row of the table twice", files.duplicate_row),
                          ("extra_row", "adds a row with a key the answer does not have", files.extra_row),
                          ("change_value", "alters one value of the table", files.change_value),
                          ("swap_values", "swaps two values of one kind in a row", files.swap_values))]
        elif isinstance(out, SentMail):
            found += [Generic("answer:mail:sent_twice", ANY, "one expected message sent twice",
                              during=mail.sent_twice(out)),
                      Generic("answer:mail:to_myself", ANY, "one expected message sent to the agent's own address",
                              during=mail.to_myself(out))]
            if out.template is not None:
                found += [Generic("answer:mail:swap_values", ANY, "a message with two filled values swapped",
                                  during=mail.swap_values(out)),
                          Generic("answer:mail:values_only", ANY, "a message of the values alone, no template text",
                                  during=mail.values_only(out)),
                          Generic("answer:mail:sentence_added", ANY, "a message with a sentence the template lacks",
                                  during=mail.sentence_added(out))]
            if out.mentions is not None:
                found.append(Generic("answer:mail:invented_id", ANY, "a message naming an invented id",
                                     during=mail.invented_id(out)))
        else:
            rows = out if isinstance(out, DbRows) else out.answer_rows
            if rows.columns == ():
                found += [Generic(f"answer:{rows.table}:drop_row", ANY, f"drops a row it adds to {rows.table}",
                                  after=state.drop_added(rows)),
                          Generic(f"answer:{rows.table}:duplicate_row", ANY, f"adds a row to {rows.table} twice",
                                  after=state.duplicate_added(rows))]
            found.append(Generic(f"answer:{rows.table}:change_value", ANY, f"alters a value it writes to {rows.table}",
                                 after=state.change_answer(rows)))
    return found


def _variants(task: Task) -> list[Generic]:
    found: list[Generic] = []
    for out in task.spec.outputs:
        if isinstance(out, TableFile):
            norms = {c.norm for c in out.columns}
            changes = [("padded", "text cells padded with spaces", files.padded, True),
                       ("recased", "text in upper case where case is free", files.recased, bool(norms & {"Si", "E"})),
                       ("numbers_as_text", "numbers written as text", files.as_text,
                        out.kind == "xlsx" and bool(norms & {"N", "I"})),
                       ("native_dates", "dates and times as native cells", files.native,
                        out.kind == "xlsx" and bool(norms & {"date", "time"}))]
            for what, about, change, wanted in changes:
                if wanted:
                    name = f"variant:{out.file}:{what}"
                    found.append(Generic(name, None, about, after=files.rendered_after(out, change))
                                 if out.kind == "xlsx" else Generic(name, None, about,
                                                                    during=files.rendered_during(out, change)))
        elif isinstance(out, SentMail):
            found += [Generic("variant:mail:html", None, "every message as HTML", during=mail.as_html),
                      Generic("variant:mail:named_recipient", None, "recipients written as `Name <ADDRESS>`",
                              during=mail.to_named),
                      Generic("variant:mail:subject_padded", None, "subjects with spaces around",
                              during=mail.subject_padded)]
    return found


def generic_agents(task: Task) -> list[Generic]:
    """Every generic agent of `task`, in a fixed order: side effects, answers, variants."""
    return [*_side_effects(task), *_answers(task), *_variants(task)]
