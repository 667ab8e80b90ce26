"""MkDocs hook: the reference pages, written from the code at every build (never kept by hand).

- `reference/tasks.md`: every registered task from its `TaskSpec`, its named checks and its
  scripted agents (the instruction is the one of the task's 8K world of seed 0);
- `reference/servers.md`: every server's tools from their listed schemas;
- `reference/cli.md`: every `loca` command from the typer app.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import json
import tempfile
from pathlib import Path
from typing import Any

import typer
from mkdocs.config.defaults import MkDocsConfig
from mkdocs.structure.files import File, Files

INSTRUCTION_LENGTH, INSTRUCTION_SEED = 8000, 0


def on_files(files: Files, config: MkDocsConfig) -> Files:
    for path, write in (("reference/tasks.md", tasks_page), ("reference/servers.md", servers_page),
                        ("reference/cli.md", cli_page)):
        files.append(File.generated(config, path, content=write()))
    return files


# ------------------------------------------------------------------------------------- tasks

def tasks_page() -> str:
    from envs.core.registry import tasks

    lines = ["# Tasks", "",
             "Generated from each task's `TaskSpec` (`envs/<task>.py`), its checker "
             "(`checkers/<task>.py`) and its scripted agents (`scaffolds/oracles/<task>.py`). "
             "`loca tasks` and `loca agents TASK` print the same facts.", ""]
    registry = tasks()
    lines += ["| task | gym id | what the agent must do |", "|---|---|---|"]
    lines += [f"| [`{t.name}`](#{t.name}) | `{t.spec.env_id}` | {t.spec.summary} |" for t in registry.values()]
    for task in registry.values():
        lines += ["", *_task_section(task)]
    return "\n".join(lines) + "\n"


def _task_section(task: Any) -> list[str]:
    from loca.adversary import generic_agents
    from scaffolds.oracles import agents

    spec = task.spec
    scale = spec.scale
    lines = [f"## `{spec.name}`", "", f"{spec.summary}.", "",
             f"- gym id: `{spec.env_id}`",
             "- servers: " + ", ".join(f"[`{key}`](servers.md#{kind})" for key, kind in spec.servers.items()),
             f"- scale: `{scale.primary}` from {scale.lo} to {scale.hi}"
             + (f", fine count `{scale.fine}`" if scale.fine else ""),
             "- tool allow-list (`--tool-filter task`): " + ", ".join(f"`{k}_{t}`" for k, t in spec.tools),
             "", f"### Instruction ({INSTRUCTION_LENGTH // 1000}K world, seed {INSTRUCTION_SEED})", "",
             *_quoted(_instruction(task)), "", "### The world", "", *_doc(task.generator), "### Outputs judged", ""]
    lines += [f"- {_output(output)}" for output in spec.outputs]
    if spec.extra_writable:
        lines.append("- other workspace files it may change: " + ", ".join(f"`{f}`" for f in spec.extra_writable))
    if spec.extra_rows:
        lines.append("- other state rows it may touch: " + ", ".join(_rows(r) for r in spec.extra_rows))
    lines += ["", "### Checks", "", *_doc(importlib.import_module(f"checkers.{task.name}")),
              "| check | what it requires |", "|---|---|"]
    lines += [f"| `{name}` | {_check_doc(fn)} |" for name, fn in task.checks.checks]
    scripted = agents(task.name)
    lines += ["", "### Scripted agents", "",
              "The oracle must pass; every other agent must fail the check named.", "",
              "| agent | must fail |", "|---|---|"]
    lines += [f"| `{name}` | {f'`{must}`' if (must := scripted.must_fail(name)) else 'nothing (passes)'} |"
              for name in scripted.names()]
    lines += ["", "Generic agents `loca validate` plays beside them (from the typed outputs and the "
              "writable set):", "", "| agent | must fail | what it does |", "|---|---|---|"]
    lines += [f"| `{g.agent}` | {_must(g.must_fail)} | {_cell(g.about)} |" for g in generic_agents(task)]
    return lines


def _instruction(task: Any) -> str:
    from envs.core.reuse import obtain_world

    with tempfile.TemporaryDirectory() as folder:
        world, _ = asyncio.run(obtain_world(task, Path(folder) / "world", INSTRUCTION_LENGTH, INSTRUCTION_SEED))
        text: str = task.spec.instruction(world)
    return text


def _doc(module: Any) -> list[str]:
    """A module's docstring as paragraphs (from its generator or checker), then a blank line."""
    text = inspect.getdoc(module) or ""
    return [_plain(" ".join(paragraph.split())) + "\n" for paragraph in text.split("\n\n") if paragraph.strip()]


def _quoted(text: str) -> list[str]:
    return [f"> {_plain(line)}".rstrip() for line in text.splitlines()]


def _output(output: Any) -> str:
    kind = type(output).__name__
    parts = [f"`{kind}`"]
    if output.files:
        parts.append("files " + ", ".join(f"`{f}`" for f in output.files))
    if output.rows:
        parts.append("state rows " + ", ".join(_rows(r) for r in output.rows))
    headers = getattr(output, "headers", None)
    if headers:
        parts.append("columns " + ", ".join(f"`{h}`" for h in headers))
    return ": ".join([parts[0], "; ".join(parts[1:])]) if len(parts) > 1 else parts[0]


def _rows(rows: Any) -> str:
    where = "" if rows.where == "1" else f" where `{rows.where}`"
    change = ("added only" if rows.columns == () else "any change" if rows.columns is None
              else "columns " + ", ".join(f"`{c}`" for c in rows.columns))
    return f"`{rows.table}`{where} ({change})"


def _check_doc(fn: Any) -> str:
    """The check's own docstring, or for a check made by a factory, the factory's."""
    doc = inspect.getdoc(fn)
    if not doc and "<locals>" in fn.__qualname__:
        factory = getattr(importlib.import_module(fn.__module__), fn.__qualname__.split(".")[0], None)
        doc = inspect.getdoc(factory) if factory is not None else None
        if doc:
            doc = f"{doc} (`{fn.__module__}.{fn.__qualname__.split('.')[0]}`)"
    return _cell(doc or "")


def _must(expected: str | None) -> str:
    return "any check" if expected is None else f"`{expected}`"


def _cell(text: str) -> str:
    return _plain(" ".join(text.split()), cell=True)


def _plain(text: str, cell: bool = False) -> str:
    """`text` shown as written: outside code spans, what Markdown would read as a link or HTML
    (and in a table `cell`, a column bar) is escaped."""
    parts = text.split("`")
    for i in range(0, len(parts), 2):
        parts[i] = (parts[i].replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
                    .replace("<", "&lt;").replace("*", "\\*"))
        if cell:
            parts[i] = parts[i].replace("|", "\\|")
    return "`".join(parts)


# ----------------------------------------------------------------------------------- servers

def servers_page() -> str:
    from mock_servers import SERVERS, load_toolbox
    from mock_servers.listing import listings

    lines = ["# Servers", "",
             "Generated from each server's tool definitions (the schemas a model is shown). "
             "A task exposes a tool as `<key>_<tool>` by default (`--naming prefixed`), where the key "
             "is the server's name in the task.", ""]
    lines += ["| server | tools | write tools | core tools |", "|---|--:|--:|--:|"]
    toolboxes = {server: load_toolbox(server) for server in sorted(SERVERS)}
    for server, toolbox in toolboxes.items():
        defs = toolbox.defs.values()
        lines.append(f"| [`{server}`](#{server}) | {len(toolbox.defs)} | {sum(d.rw == 'write' for d in defs)} "
                     f"| {sum(d.core for d in defs)} |")
    for server, toolbox in toolboxes.items():
        lines += ["", f"## `{server}`", ""]
        if toolbox.instructions:
            lines += [_cell(toolbox.instructions), ""]
        for name, listing in listings(toolbox).items():
            tool = toolbox.defs[name]
            tags = [tool.rw] + (["core"] if tool.core else []) + (["destructive"] if tool.destructive else [])
            lines += [f"### `{name}`", "", f"*{', '.join(tags)}*", "", _plain(listing.description.strip()), "",
                      *_parameters(listing.parameters), ""]
    return "\n".join(lines) + "\n"


def _parameters(schema: dict[str, Any]) -> list[str]:
    properties = schema.get("properties", {})
    if not properties:
        return ["No parameters."]
    required = set(schema.get("required", []))
    lines = ["| parameter | type | required | description |", "|---|---|---|---|"]
    for name, prop in properties.items():
        lines.append(f"| `{name}` | {_type(prop)} | {'yes' if name in required else ''} "
                     f"| {_cell(prop.get('description', ''))}{_bounds(prop)} |")
    return lines


def _type(prop: dict[str, Any]) -> str:
    if "type" in prop:
        kind = prop["type"]
        if kind == "array" and isinstance(prop.get("items"), dict):
            return f"array of {_type(prop['items'])}"
        return kind if isinstance(kind, str) else " or ".join(kind)
    if "enum" in prop:
        return "one of " + ", ".join(f"`{json.dumps(v)}`" for v in prop["enum"])
    options = prop.get("anyOf") or prop.get("oneOf")
    if options:
        return " or ".join(_type(option) for option in options)
    return "any"


def _bounds(prop: dict[str, Any]) -> str:
    found = [f"{key} {prop[key]}" for key in ("minimum", "maximum", "minLength", "maxLength", "maxItems")
             if key in prop]
    if "enum" in prop and "type" in prop:
        found.append("one of " + ", ".join(f"`{json.dumps(v)}`" for v in prop["enum"]))
    if "default" in prop:
        found.append(f"default `{json.dumps(prop['default'])}`")
    return f" ({'; '.join(found)})" if found else ""


# --------------------------------------------------------------------------------------- CLI

def cli_page() -> str:
    from loca.cli import app

    group = typer.main.get_command(app)
    lines = ["# Command line", "", "Generated from the `loca` command's definitions; `loca COMMAND --help` "
             "prints the same.", ""]
    lines += _command(group, "loca", level=2)
    return "\n".join(lines) + "\n"


def _command(command: Any, path: str, level: int) -> list[str]:
    lines: list[str] = []
    if level > 2:
        lines += [f"{'#' * min(level, 4)} `{path}`", ""]
    context = command.context_class(command, info_name=path)
    lines += ["```text", " ".join([path, *command.collect_usage_pieces(context)]), "```", ""]
    if command.help:
        lines += [_plain(inspect.cleandoc(command.help)), ""]
    rows = [_param(p, context) for p in command.params if not getattr(p, "hidden", False)]
    if rows:
        lines += ["| argument or option | description |", "|---|---|", *rows, ""]
    if hasattr(command, "list_commands"):  # a group
        for name in command.list_commands(context):
            sub = command.get_command(context, name)
            if sub is not None and not sub.hidden:
                lines += _command(sub, f"{path} {name}", level + 1)
    return lines


def _param(param: Any, context: Any) -> str:
    record = param.get_help_record(context)
    name, text = record if record else (param.name.upper(), param.help or "")
    return f"| `{name}` | {_cell(text)} |"
