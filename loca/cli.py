"""The `loca` command line."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, TypeVar

import typer
from pydantic import ValidationError
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from loca.core.lengths import TIERS, label, parse_length, parse_lengths, parse_seeds

T = TypeVar("T")
app = typer.Typer(add_completion=False, no_args_is_help=True,
                  help="LOCA gym: long-context agent environments of any size.")
console = Console()
err = Console(stderr=True)


def _parsed(parse: Callable[[str], T], text: str) -> T:
    try:
        return parse(text)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


def _task(name: str):  # type: ignore[no-untyped-def]
    from loca.registry import get_task

    try:
        return get_task(name)
    except KeyError as exc:
        raise typer.BadParameter(str(exc.args[0])) from None


@app.command()
def tasks() -> None:
    """List the tasks."""
    from loca.registry import tasks as all_tasks

    table = Table("task", "env id", "servers", "scale")
    for spec in all_tasks().values():
        table.add_row(spec.name, spec.env_id, ", ".join(spec.servers), spec.scale.primary)
    console.print(table)


@app.command()
def agents(task: str) -> None:
    """The scripted agents of TASK, one name per line (LLM agents: openai:MODEL)."""
    from scaffolds.oracles import scripts_for

    _task(task)
    for name in scripts_for(task):
        typer.echo(name)


@app.command()
def generate(
    task: str,
    out: Annotated[Path, typer.Option(help="world directory to create (replaced if present)")],
    length: Annotated[str, typer.Option(help="token target: 8k..256k or a number")] = "8k",
    seed: Annotated[int, typer.Option()] = 0,
) -> None:
    """Generate one world of TASK at LENGTH and measure its environment description length."""
    from loca.calibration import params_for
    from loca.core.world import INSTRUCTION_FILE, write_text_atomic
    from loca.measure import build_world

    spec = _task(task)
    target = _parsed(parse_length, length)

    async def build() -> None:
        params = await params_for(spec, target, seed)
        world = await build_world(spec, out, params, seed, target)
        tokens = world.meta.env_description_tokens or 0
        console.print(f"[bold]{task}[/] seed {seed}: {params} -> {tokens} tokens "
                      f"(target {target}, {100 * (tokens - target) / target:+.1f}%)")
        console.print(f"world: {out}  content hash: {world.meta.content_hash[:16]}")
        instruction = spec.instruction(world)
        write_text_atomic(out / INSTRUCTION_FILE, instruction + "\n")
        console.print(f"instruction ({out / INSTRUCTION_FILE}; also sent by `loca serve`):\n{instruction}")

    asyncio.run(build())


@app.command()
def calibrate(
    task: str,
    lengths: Annotated[str, typer.Option(help="comma-separated targets")] = ",".join(TIERS),
    seeds: Annotated[str, typer.Option(help="e.g. 0-4")] = "0-4",
) -> None:
    """Search the scale parameters per (length, seed) and write the task's calibration table."""
    from loca.calibration import calibrate as run_calibration
    from loca.calibration import table_path

    spec = _task(task)
    targets, seed_list = _parsed(parse_lengths, lengths), _parsed(parse_seeds, seeds)
    with _progress() as progress:
        bar = progress.add_task("calibrating", total=len(targets) * len(seed_list))

        def step(target: int, seed: int, entry) -> None:  # type: ignore[no-untyped-def]
            progress.console.print(f"{label(target):>6} seed {seed}: {entry.params} -> {entry.measured} "
                                   f"({100 * (entry.measured - target) / target:+.1f}%)")
            progress.advance(bar)

        asyncio.run(run_calibration(spec, targets, seed_list, progress=step))
    console.print(f"written {table_path(spec)}")


@app.command()
def validate(
    task: str,
    lengths: Annotated[str, typer.Option(help="comma-separated targets")] = ",".join(TIERS),
    seeds: Annotated[str, typer.Option(help="e.g. 0-4")] = "0-4",
) -> None:
    """Validate TASK's checker: the oracle passes and the no-op agent and every mutant fail the
    check they target, at every length and seed. Exits 1 on any violation."""
    from loca.validate import run_validation
    from scaffolds.oracles import expected_failures

    spec = _task(task)
    targets, seed_list = _parsed(parse_lengths, lengths), _parsed(parse_seeds, seeds)
    plays = len(targets) * len(seed_list) * (1 + len(expected_failures(task)))
    with _progress() as progress:
        bar = progress.add_task("validating", total=plays)
        outcomes = run_validation(spec, targets, seed_list, progress=lambda _: progress.advance(bar))
    table = Table("agent", "must", *[label(t) for t in targets], title=f"{task}: checker validation")
    for agent in dict.fromkeys(o.agent for o in outcomes):
        mine = [o for o in outcomes if o.agent == agent]
        cells = []
        for target in targets:
            cell = [o for o in mine if o.length == target]
            good = sum(o.ok for o in cell)
            cells.append(f"[green]{good}/{len(cell)}[/]" if good == len(cell) else f"[red]{good}/{len(cell)}[/]")
        table.add_row(agent, "pass" if mine[0].expected is None else f"fail {mine[0].expected}", *cells)
    console.print(table)
    worst = max((abs(o.measured - o.length) / o.length for o in outcomes), default=0.0)
    console.print(f"{len(outcomes)} plays; largest length deviation from target {100 * worst:.1f}%")
    bad = [o for o in outcomes if not o.ok]
    for o in bad:
        err.print(f"violation: {o.agent} at {label(o.length)} seed {o.seed} failed {list(o.failed)}")
    if bad:
        raise typer.Exit(1)


@app.command()
def check(world_dir: Path) -> None:
    """Grade a world as it stands; print the verdict as JSON; exit 0 only if every check passes."""
    from loca.core.world import World

    world = World.load(world_dir)
    verdict = _task(world.task).check(world)
    typer.echo(json.dumps(verdict.to_dict(), indent=1))
    if not verdict.passed:
        err.print(f"failed checks: {', '.join(verdict.failed_names())}")
        raise typer.Exit(1)


@app.command()
def serve(
    server: Annotated[str | None, typer.Argument(help="one server; all of the task's if omitted")] = None,
    world: Annotated[Path, typer.Option(help="world directory")] = Path("."),
    transport: Annotated[str, typer.Option(help="stdio or http")] = "stdio",
    host: str = "127.0.0.1",
    port: int = 8765,
    allow_remote: Annotated[bool, typer.Option(help="allow a non-loopback --host")] = False,
) -> None:
    """Serve a world over MCP (stdio or streamable HTTP)."""
    from loca.core.world import World
    from mock_servers import load_toolbox
    from mock_servers.gateway import Gateway

    if transport not in ("stdio", "http"):
        raise typer.BadParameter("transport must be stdio or http")
    if transport == "http" and host not in ("127.0.0.1", "localhost", "::1") and not allow_remote:
        raise typer.BadParameter(f"refusing to bind {host}: pass --allow-remote to serve beyond loopback")
    loaded = World.load(world)
    if server is None:
        spec = _task(loaded.task)
        mcp = Gateway(loaded, spec.servers).mcp_app(instructions=spec.instruction(loaded))
    else:
        mcp = load_toolbox(server).build(loaded)
    if transport == "stdio":
        mcp.run(transport="stdio", show_banner=False)
    else:
        mcp.run(transport="http", host=host, port=port, show_banner=False)


def serve_main() -> None:
    """`python -m mock_servers SERVER --world DIR ...`"""
    typer.run(serve)


@app.command()
def run(
    task: Annotated[str, typer.Option(help="task name")] = "canvas_arrange_exam",
    agent: Annotated[str, typer.Option(help="oracle, noop, mutant:NAME or openai:MODEL")] = "oracle",
    lengths: Annotated[str, typer.Option(help="comma-separated targets")] = ",".join(TIERS),
    seeds: Annotated[str, typer.Option(help="e.g. 0-4")] = "0-4",
    out: Annotated[Path, typer.Option(help="run directory (rerun to resume)")] = Path("runs/default"),
    base_url: Annotated[str | None, typer.Option(help="OpenAI-compatible endpoint")] = None,
    max_turns: int = 300,
    naming: Annotated[str, typer.Option(help="tool names: prefixed, dedup or bare")] = "prefixed",
    tool_filter: Annotated[str, typer.Option(help="all tools, or core (those the tasks need)")] = "all",
    processes: Annotated[int, typer.Option(help="episodes in parallel")] = 1,
) -> None:
    """Run AGENT on TASK at every length and seed; results in OUT. With no options: the oracle
    on canvas_arrange_exam at 8k..256k, seeds 0-4."""
    from loca.episode import run_episode
    from loca.runner import RunConfig, execute, plan

    _task(task)
    try:
        config = RunConfig(task=task, lengths=parse_lengths(lengths), seeds=parse_seeds(seeds),
                           agent=agent, base_url=base_url, max_turns=max_turns, naming=naming,
                           tool_filter=tool_filter)
    except (ValueError, ValidationError) as exc:
        raise typer.BadParameter(str(exc)) from None
    table = Table("length", "seed", "target", "measured", "dev", "state", "checks failed",
                  title=f"{task} · {agent}")
    with _progress() as progress:
        bar = progress.add_task("episodes", total=len(plan(config)))

        def show(result: dict) -> None:  # type: ignore[type-arg]
            progress.advance(bar)

        summary = execute(config, out, run_episode, processes, on_result=show)
    for line in (out / "episodes.jsonl").read_text(encoding="utf-8").splitlines():
        r = json.loads(line)
        measured = r.get("env_description_tokens") or 0
        dev = f"{100 * (measured - r['target_tokens']) / r['target_tokens']:+.1f}%" if measured else "-"
        failed = ", ".join(c["name"] for c in r.get("checks", []) if not c["passed"]) or "-"
        state = f"[green]{r['terminal_state']}[/]" if r["success"] else f"[red]{r['terminal_state']}[/]"
        table.add_row(r["length"], str(r["seed"]), str(r["target_tokens"]), str(measured), dev, state, failed)
    console.print(table)
    console.print(f"passed {summary['passed']}/{summary['episodes']} "
                  f"(accuracy {summary['accuracy']:.3f}); max length deviation "
                  f"{100 * summary['max_length_deviation']:.1f}%; results in {out}")


def _progress() -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=console, transient=True,
                    disable=not sys.stderr.isatty())


if __name__ == "__main__":
    app()
