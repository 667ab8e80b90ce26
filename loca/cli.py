"""The `loca` command line."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from loca import __version__
from loca.cache_cli import cache_app
from loca.core.errors import BadInput
from loca.core.lengths import LONG_TIERS, MAX_TOKENS, TIERS, label, parse_length, parse_lengths, parse_seeds
from scaffolds.budget import DEFAULTS_TEXT

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress
    from rich.table import Table

    from envs.core.registry import Task
    from loca.runner import RunConfig
    from loca.validate import Outcome

S = TypeVar("S")
T = TypeVar("T")
app = typer.Typer(add_completion=False, no_args_is_help=True, pretty_exceptions_enable=False,
                  help="LOCA gym: long-context agent environments of any size.")
app.add_typer(cache_app, name="cache")
DEBUG_FLAG = "--debug"
LENGTHS_HELP = (f"comma-separated targets (8k, 1m, 50000) or groups: default ({TIERS[0]}..{TIERS[-1]}), "
                f"long ({','.join(LONG_TIERS)}), all")


def _show_version(shown: bool) -> None:
    if shown:
        typer.echo(f"loca {__version__}")
        raise typer.Exit()


@app.callback()
def _options(version: Annotated[bool, typer.Option(
        "--version", is_eager=True, callback=_show_version, help="print the version and exit")] = False) -> None:
    pass


def main(argv: list[str] | None = None) -> None:
    """The `loca` entry point: a bad command line or input is one line on stderr and exit 2, a
    bug one line and exit 1, never a traceback (`--debug` anywhere on the command line shows it);
    Ctrl-C exits 130."""
    args = list(sys.argv[1:] if argv is None else argv)
    debug = DEBUG_FLAG in args
    args = [a for a in args if a != DEBUG_FLAG]
    try:
        code = app(args=args, prog_name="loca", standalone_mode=False)  # a command's typer.Exit: its code
    except typer.Abort:
        print("loca: interrupted", file=sys.stderr)
        sys.exit(130)
    except typer.TyperException as exc:  # usage errors: bad values, unknown options, missing arguments
        if debug:
            raise
        if exc.format_message():  # empty when the usage was shown instead (no command given)
            print(f"loca: error: {exc.format_message()}", file=sys.stderr)
        sys.exit(getattr(exc, "exit_code", 2))
    except Exception as exc:  # an input the commands refused (2), or a bug (1): one line either way
        if debug:
            raise
        message = " ".join(str(exc).split()) or type(exc).__name__
        print(f"loca: error: {message[:500]}", file=sys.stderr)
        sys.exit(2 if isinstance(exc, BadInput) else 1)
    sys.exit(code if isinstance(code, int) else 0)


@cache
def _consoles() -> tuple[Console, Console]:
    """(stdout, stderr) consoles, made on first use: plain listings never import rich."""
    from rich.console import Console

    return Console(), Console(stderr=True)


def say(text: str) -> None:
    """A line on standard output (rich markup), never cut at the console's width."""
    _consoles()[0].print(text, soft_wrap=True)


def complain(text: str) -> None:
    """A line on standard error (rich markup), never cut at the console's width."""
    _consoles()[1].print(text, soft_wrap=True)


def _table(*columns: str, title: str) -> Table:
    from rich.table import Table

    return Table(*columns, title=title)


def _parsed(parse: Callable[[S], T], value: S) -> T:
    try:
        return parse(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from None


def _task(name: str) -> Task:
    from envs.core.registry import get_task, tasks

    try:
        return get_task(name)
    except KeyError:
        raise typer.BadParameter(_unknown("task", name, list(tasks()))) from None


def _unknown(kind: str, name: str, known: list[str]) -> str:
    """`unknown task 'x'; did you mean y?`, or the known names when none is close."""
    import difflib

    close = difflib.get_close_matches(name, known, n=3, cutoff=0.6)
    hint = f"did you mean {' or '.join(close)}?" if close else f"known: {', '.join(known) or 'none'}"
    return f"unknown {kind} {name!r}; {hint}"


def _task_names(tasks: str) -> list[str]:
    """The task names of a TASKS argument: names joined by commas, or `all`."""
    from envs.core.registry import tasks as registered

    names = list(registered()) if tasks == "all" else \
        list(dict.fromkeys(t.strip() for t in tasks.split(",") if t.strip()))
    if not names:
        raise typer.BadParameter("no tasks given: name them, or use all")
    return names


def _check_agent(agent: str, task: Task) -> None:
    """An agent the run can make for `task`: a scripted one of the task, or an LLM agent
    (`openai:MODEL`, `anthropic:MODEL`, `profile:ID`) with its API key set (without it every
    episode would end `llm_error`, and a resume skips those)."""
    import os

    from scaffolds.clients import LLM_AGENTS, agent_key_env, is_llm_agent
    from scaffolds.oracles import agents as scripted_agents

    if is_llm_agent(agent):
        try:
            key_env = agent_key_env(agent)
        except ValueError as exc:
            raise typer.BadParameter(str(exc)) from None
        if not os.environ.get(key_env):
            raise typer.BadParameter(f"{agent} needs an API key in {key_env} (any placeholder "
                                     f"for local servers that ignore keys)")
        return
    names = scripted_agents(task.name).names()
    if agent not in names:
        raise typer.BadParameter(f"{_unknown('agent', agent, names)} (for {task.name}; LLM agents: "
                                 f"{LLM_AGENTS})")


def _sandbox(allow_unconfined: bool = False) -> str:
    """The code sandbox's mode for this run, printed once (standard output); a clear error
    where code would run unconfined without an explicit request. `allow_unconfined` (set in the environment, so that
    worker processes inherit it) lets the automatic choice fall back to unconfined."""
    import os

    from mock_servers.sandbox import ENV_ALLOW_UNCONFINED, SandboxUnavailable, describe, sandbox_mode

    if allow_unconfined:
        os.environ[ENV_ALLOW_UNCONFINED] = "1"
    try:
        mode = sandbox_mode()
    except SandboxUnavailable as exc:
        typer.echo(f"loca: error: {exc.message}", err=True)
        raise typer.Exit(2) from None
    typer.secho(f"sandbox: {describe(mode)}", fg="red" if mode == "unconfined" else None)
    return mode


@app.command()
def tasks() -> None:
    """List the tasks: gym id, servers, scale parameter, and how many tools each exposes: all
    tools of its servers / the core ones / its own allow-list (`--tool-filter all|core|task`)."""
    from envs.core.calibration import load_table
    from envs.core.registry import tasks as all_tasks
    from mock_servers.catalog import load

    catalog = load()
    rows = [("task", "gym id", "tools all/core/task", "scale", "calibrated", "servers")]
    for task in all_tasks().values():
        spec = task.spec
        tools = [info for server in spec.servers.values() for info in catalog[server].values()]
        core = sum(1 for info in tools if info["core"])
        table = load_table(task)
        targets = sorted(int(t) for t in table.entries) if table else []
        calibrated = f"{label(targets[0])}..{label(targets[-1])} ({len(targets)})" if targets else "-"
        rows.append((spec.name, spec.env_id, f"{len(tools)}/{core}/{len(spec.tools)}", spec.scale.primary,
                     calibrated, ",".join(spec.servers)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    for row in rows:
        typer.echo("  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=False)) + "  " + row[-1])
    typer.echo(f"\nlengths: default {','.join(TIERS)}; long (opt-in) {','.join(LONG_TIERS)}; "
               f"any token count up to {MAX_TOKENS:,}")


@app.command()
def agents(task: str) -> None:
    """The scripted agents of TASK, one name per line, with the check each must fail, then the
    generic agents `loca validate` plays beside them (LLM agents: openai:MODEL, anthropic:MODEL or
    profile:ID)."""
    from loca.adversary import generic_agents
    from scaffolds.oracles import agents as scripted_agents

    spec = _task(task)
    scripted = scripted_agents(task)
    for name in scripted.names():
        must = scripted.must_fail(name)
        typer.echo(name if must is None else f"{name}\tmust fail {must}")
    for generic in generic_agents(spec):
        typer.echo(f"{generic.agent}\t{_must(generic.must_fail)}: {generic.about}")


def _must(expected: str | None) -> str:
    """What an agent must do, as the tables say it."""
    from loca.adversary import ANY

    return "must pass" if expected is None else "must fail a check" if expected == ANY else f"must fail {expected}"


@app.command()
def generate(
    task: str,
    out: Annotated[Path, typer.Option(
        help="one world: the world directory (replaced if present); in bulk: the dataset "
             "directory (rerun to build only what is missing)")],
    length: Annotated[str | None, typer.Option(help="one world: token target, 8k..2m or a number [8k]")] = None,
    seed: Annotated[int | None, typer.Option(help="one world: its seed [0]")] = None,
    lengths: Annotated[str | None, typer.Option(
        help="in bulk: comma-separated targets [8k]; each world in OUT/<length>/<seed>/")] = None,
    seeds: Annotated[str | None, typer.Option(help="in bulk: e.g. 0-999 [0-4]")] = None,
    processes: Annotated[int, typer.Option(min=1, help="in bulk: worlds built in parallel")] = 1,
) -> None:
    """Generate one world of TASK at LENGTH and measure its environment description length; with
    --lengths or --seeds, every world of LENGTHS x SEEDS in parallel, with an index of them
    (OUT/index.jsonl and OUT/index.parquet)."""
    spec = _task(task)
    if lengths is None and seeds is None:
        if processes != 1:
            raise typer.BadParameter("--processes builds worlds in bulk: give --lengths or --seeds")
        _generate_one(spec, out, _parsed(parse_length, length or "8k"), 0 if seed is None else seed)
        return
    if length is not None or seed is not None:
        raise typer.BadParameter("use --length and --seed for one world, --lengths and --seeds in bulk; not both")
    _generate_bulk(spec, out, _parsed(parse_lengths, lengths or "8k"), _parsed(parse_seeds, seeds or "0-4"),
                   processes)


def _generate_one(spec: Task, out: Path, target: int, seed: int) -> None:
    from envs.core.calibration import build_to_target
    from loca.core.world import INSTRUCTION_FILE, write_text_atomic

    async def build() -> None:
        world = await build_to_target(spec, out, target, seed)
        tokens = world.meta.env_description_tokens or 0
        builds = world.meta.builds
        say(f"[bold]{spec.name}[/] seed {seed}: {world.meta.params} -> {tokens} tokens "
            f"(target {target}, {100 * (tokens - target) / target:+.1f}%; "
            f"{builds} build{'s' if builds != 1 else ''})")
        say(f"world: {out}  content hash: {world.meta.content_hash[:16]}")
        instruction = spec.spec.instruction(world)
        write_text_atomic(out / INSTRUCTION_FILE, instruction + "\n")
        say(f"instruction ({out / INSTRUCTION_FILE}; also sent by `loca serve`):\n{instruction}")

    _run_async(build())


def _generate_bulk(spec: Task, out: Path, targets: list[int], seed_list: list[int], processes: int) -> None:
    from rich.markup import escape

    from loca.bulk import INDEX_JSONL, INDEX_PARQUET, BulkError, generate_many

    with _progress() as progress:
        bar = progress.add_task("worlds", total=len(targets) * len(seed_list))
        try:
            summary = generate_many(spec, out, targets, seed_list, processes,
                                    on_world=lambda _: progress.advance(bar))
        except BulkError as exc:
            complain(f"loca: error: {escape(str(exc))}")
            raise typer.Exit(2) from None
    table = _table("length", "worlds", "tokens (min-max)", "largest deviation", "builds per built world",
                   "cached", title=f"{spec.name}: worlds in {out}")
    for target in sorted({r["target_tokens"] for r in summary.rows}):
        rows = [r for r in summary.rows if r["target_tokens"] == target]
        built = [r["builds"] for r in rows if r["origin"] == "built"]
        tokens = [r["env_description_tokens"] for r in rows]
        worst = max(abs(t - target) / target for t in tokens)
        table.add_row(label(target), str(len(rows)), f"{min(tokens):,}-{max(tokens):,}", f"{100 * worst:.1f}%",
                      f"{sum(built) / len(built):.2f}" if built else "-", str(len(rows) - len(built)))
    _consoles()[0].print(table)
    for failure in summary.failed[:20]:
        complain(f"failed: {label(failure.length)} seed {failure.seed}: {escape(failure.error or '')}")
    made = summary.built + summary.copied
    rate = f" ({made / summary.seconds:.1f} worlds/s)" if made else ""
    say(f"built {summary.built}, copied from the world cache {summary.copied}, already complete {summary.kept}, "
        f"failed {len(summary.failed)} of {summary.planned} planned in {summary.seconds:.1f} s{rate}")
    say(f"index of {len(summary.rows)} worlds: {out / INDEX_JSONL}, {out / INDEX_PARQUET}")
    if summary.failed:
        raise typer.Exit(1)


@app.command()
def calibrate(
    task: str,
    lengths: Annotated[str, typer.Option(help=LENGTHS_HELP)] = ",".join(TIERS),
    seeds: Annotated[str, typer.Option(help="e.g. 0-4")] = "0-4",
    model_only: Annotated[bool, typer.Option(help="only refit the length model of the shipped table")] = False,
) -> None:
    """Search the scale parameters per (length, seed), fit the task's length model and write
    both to the task's calibration table."""
    from envs.core.calibration import CalibrationError, Entry, refit, table_path
    from envs.core.calibration import calibrate as run_calibration

    spec = _task(task)
    if model_only:
        try:
            table = _run_async(refit(spec))
        except CalibrationError as exc:
            complain(f"[red]{exc}[/]")
            raise typer.Exit(1) from None
        say(f"length model {table.model.model_dump() if table.model else None}; written {table_path(spec)}")
        return
    targets, seed_list = _parsed(parse_lengths, lengths), _parsed(parse_seeds, seeds)
    with _progress() as progress:
        bar = progress.add_task("calibrating", total=len(targets) * len(seed_list))

        def step(target: int, seed: int, entry: Entry) -> None:
            progress.console.print(f"{label(target):>6} seed {seed}: {entry.params} -> {entry.measured} "
                                   f"({100 * (entry.measured - target) / target:+.1f}%)")
            progress.advance(bar)

        _run_async(run_calibration(spec, targets, seed_list, progress=step))
    say(f"written {table_path(spec)}")


@app.command()
def validate(
    tasks: Annotated[str, typer.Argument(help="a task, several joined by commas, or all")],
    lengths: Annotated[str, typer.Option(help=LENGTHS_HELP)] = ",".join(TIERS),
    seeds: Annotated[str, typer.Option(help="e.g. 0-4")] = "0-4",
    processes: Annotated[int, typer.Option(min=1, help="worlds validated in parallel")] = 1,
) -> None:
    """Validate the checkers of TASKS: the oracle passes and the no-op agent and every mutant
    fail the check they target, at every length and seed. Exits 1 on any violation."""
    import time

    from loca.adversary import generic_agents
    from loca.validate import DeclarationError, run_validation
    from scaffolds.oracles import agents as scripted_agents

    specs = [_task(name) for name in _task_names(tasks)]
    targets, seed_list = _parsed(parse_lengths, lengths), _parsed(parse_seeds, seeds)
    _sandbox()
    plays = len(targets) * len(seed_list) * sum(2 + len(scripted_agents(t.name).names()) + len(generic_agents(t))
                                                for t in specs)
    started = time.perf_counter()
    with _progress() as progress:
        bar = progress.add_task("validating", total=plays)
        try:
            found = run_validation(specs, targets, seed_list, processes,
                                   progress=lambda _: progress.advance(bar))
        except DeclarationError as exc:
            complain(f"[red]{exc}[/]")
            raise typer.Exit(1) from None
    for name, outcomes in found.items():
        _consoles()[0].print(_validation_table(name, outcomes, targets))
        say(f"{len(outcomes)} plays; largest length deviation from target {100 * _deviation(outcomes):.1f}%")
    if len(found) > 1:
        _consoles()[0].print(_validation_summary(found))
    everything = [o for outcomes in found.values() for o in outcomes]
    say(f"{len(specs)} task(s), {len(specs) * len(targets) * len(seed_list)} worlds, {len(everything)} plays "
        f"in {time.perf_counter() - started:.0f} s; largest length deviation {100 * _deviation(everything):.1f}%")
    bad = [(name, o) for name, outcomes in found.items() for o in outcomes if not o.ok]
    for name, o in bad:
        why = f" ({o.over_limits})" if o.over_limits else " (a check crashed)" if o.errored else ""
        complain(f"violation: {name}: {o.agent} at {label(o.length)} seed {o.seed} failed {list(o.failed)}{why}")
    if bad:
        raise typer.Exit(1)


def _deviation(outcomes: list[Outcome]) -> float:
    return max((abs(o.measured - o.length) / o.length for o in outcomes), default=0.0)


def _validation_table(task: str, outcomes: list[Outcome], targets: list[int]) -> Table:
    from loca.adversary import PREFIX
    from loca.validate import BUDGET, INITIAL, VALIDATOR

    table = _table("agent", "must", *[label(t) for t in targets], title=f"{task}: checker validation")
    for agent in dict.fromkeys(o.agent for o in outcomes):
        mine = [o for o in outcomes if o.agent == agent]
        cells = []
        for target in targets:
            cell = [o for o in mine if o.length == target and o.not_applicable is None]
            good, idle = sum(o.ok for o in cell), sum(1 for o in mine if o.length == target and o.not_applicable)
            shown = f"{good}/{len(cell)}" + (f" n/a {idle}" if idle else "")
            cells.append(f"[green]{shown}[/]" if good == len(cell) else f"[red]{shown}[/]")
        must = "= ground truth" if agent == VALIDATOR else f"<= {BUDGET} tokens" if agent == INITIAL else \
            _must(mine[0].expected).removeprefix("must ") if agent.startswith(PREFIX) else \
            "pass within limits" if mine[0].expected is None else f"fail {mine[0].expected}"
        table.add_row(agent, must, *cells)
    return table


def _validation_summary(found: dict[str, list[Outcome]]) -> Table:
    from rich.table import Column, Table

    table = Table(Column("task", no_wrap=True, min_width=max(map(len, found))), "worlds", "plays", "as expected",
                  "largest deviation", title="checker validation")
    for name, outcomes in found.items():
        good = sum(o.ok for o in outcomes)
        cell = f"[green]{good}[/]" if good == len(outcomes) else f"[red]{good}[/]"
        worlds = len({(o.length, o.seed) for o in outcomes})
        table.add_row(name, str(worlds), str(len(outcomes)), cell, f"{100 * _deviation(outcomes):.1f}%")
    return table


@app.command()
def check(world_dir: Path) -> None:
    """Grade a world as it stands; print the verdict as JSON; exit 0 only if every check passes."""
    from loca.core.world import World

    world = World.load(world_dir, complete=True)
    verdict = _task(world.task).check(world)
    typer.echo(json.dumps(verdict.to_dict(), indent=1))
    if not verdict.passed:
        complain(f"failed checks: {', '.join(verdict.failed_names())}")
        raise typer.Exit(1)


@app.command()
def serve(
    server: Annotated[str | None, typer.Argument(help="one server; all of the task's if omitted")] = None,
    world: Annotated[Path, typer.Option(help="world directory")] = Path("."),
    transport: Annotated[str, typer.Option(help="stdio or http")] = "stdio",
    host: str = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535)] = 8765,
    allow_remote: Annotated[list[str] | None, typer.Option(
        metavar="NAME", help="a host name or address clients may use besides loopback (repeat or "
                             "comma-separate); needed to bind beyond loopback")] = None,
) -> None:
    """Serve a world over MCP (stdio or streamable HTTP). Over HTTP, requests whose Host or
    Origin names neither loopback nor an --allow-remote name are refused (421, 403)."""
    from loca.core.world import World
    from mock_servers import load_toolbox
    from mock_servers.gateway import Gateway
    from mock_servers.serve import check_bind, remote_names, run_app

    names = _parsed(remote_names, allow_remote)
    _parsed(lambda t: check_bind(t, host, names), transport)
    loaded = World.load(world, complete=True)
    if server is None:
        task = _task(loaded.task)
        mcp = Gateway(loaded, task.spec.servers).mcp_app(instructions=task.spec.instruction(loaded))
    else:
        mcp = load_toolbox(server).build(loaded)
    run_app(mcp, transport, host, port, names)


@app.command("env-server")
def env_server(
    host: str = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535)] = 8770,
    max_sessions: Annotated[int, typer.Option(min=1, help="sessions open at once; beyond, 503")] = 64,
    idle_timeout: Annotated[float, typer.Option(min=1, help="seconds before an idle session is closed")] = 600,
    root: Annotated[Path | None, typer.Option(
        help="folder of the sessions' worlds, cleared at start (default: one per port in the temp dir)")] = None,
    allow_remote: Annotated[list[str] | None, typer.Option(
        metavar="NAME", help="a host name or address clients may use besides loopback (repeat or "
                             "comma-separate); needed to bind beyond loopback")] = None,
) -> None:
    """Serve many episodes over HTTP for RL trainers and other frameworks: open a session
    (task, length, seed), call its tools as JSON or over MCP, grade it, delete it. Beyond
    loopback a bearer token (LOCA_ENV_SERVER_TOKEN) is required on every request."""
    import os

    from loca.envserver import TOKEN_ENV, ServerSettings, serve
    from mock_servers.serve import remote_names

    settings = ServerSettings(host=host, port=port, capacity=max_sessions, idle_timeout_s=idle_timeout, root=root,
                              token=os.environ.get(TOKEN_ENV) or None,
                              allow_remote=_parsed(remote_names, allow_remote))
    serve(settings, announce=say)


@app.command()
def run(
    tasks: Annotated[str, typer.Option(help="comma-separated task names, or all")] = "all",
    agent: Annotated[str, typer.Option(
        help="oracle, noop, mutant:NAME, openai:MODEL, anthropic:MODEL or profile:ID")] = "oracle",
    lengths: Annotated[str, typer.Option(help=LENGTHS_HELP)] = ",".join(TIERS),
    seeds: Annotated[str, typer.Option(help="e.g. 0-4")] = "0-4",
    trials: Annotated[int, typer.Option(min=1, help="episodes per task, length and seed")] = 1,
    out: Annotated[Path, typer.Option(
        help="run directory (rerun to resume; a larger plan with the same settings grows it)")] = Path("runs/default"),
    base_url: Annotated[str | None, typer.Option(help="the model provider's endpoint")] = None,
    max_turns: int = 300,
    naming: Annotated[str, typer.Option(help="tool names: prefixed, dedup or bare")] = "prefixed",
    tool_filter: Annotated[str, typer.Option(
        help="all tools of the task's servers, core (P1 tools of the seed tasks) or task (its allow-list)")] = "all",
    processes: Annotated[int, typer.Option(min=1, help="episodes in parallel")] = 1,
    executor: Annotated[str, typer.Option(
        help="local (this machine's processes) or ray (Ray tasks)")] = "local",
    ray_address: Annotated[str | None, typer.Option(
        help="the Ray cluster to join (default: start a local one with --processes CPUs)")] = None,
    connect_timeout: Annotated[float | None, typer.Option(
        help="seconds to wait for a connection to the model provider")] = None,
    response_timeout: Annotated[float | None, typer.Option(
        help="seconds to wait for a streamed model reply to start")] = None,
    strategy: Annotated[str | None, typer.Option(
        help="context strategies joined by +: clear_tool_results, clear_thinking, compaction, "
             "awareness; react for none; add paper for the paper's settings")] = None,
    strategy_config: Annotated[Path | None, typer.Option(
        help="YAML or JSON file tuning the strategies and the context budget (`context:`, "
             f"optionally `strategy:`); {DEFAULTS_TEXT}")] = None,
    max_in_flight: Annotated[int | None, typer.Option(
        min=1, help="model calls in flight at once, for the whole run")] = None,
    requests_per_minute: Annotated[float | None, typer.Option(
        min=0.001, help="model calls per minute, for the whole run")] = None,
    tokens_per_minute: Annotated[float | None, typer.Option(
        min=1, help="model tokens (input + output) per minute, for the whole run")] = None,
    strict: Annotated[bool, typer.Option(
        help="refuse options the model's profile does not support (--no-strict sends them)")] = True,
    keep_worlds: Annotated[str, typer.Option(
        help="final worlds kept in the episode folders: all, failed (of episodes that did not pass) "
             "or none; trajectories and records always stay")] = "failed",
    retry_errors: Annotated[bool, typer.Option(
        help="on a rerun, run again the episodes that ended in llm_error, harness_error or provider_truncated")] = True,
    stop_after_errors: Annotated[int | None, typer.Option(
        min=0, show_default=False,
        help="stop once this many episodes in a row fail the same way at the model provider "
             "(refused, unreachable, bad key, no such model...) [default: 3]; 0: never")] = None,
    verbose: Annotated[bool, typer.Option(help="also a row per episode in the final report")] = False,
    allow_unconfined_sandbox: Annotated[bool, typer.Option(
        help="where neither bubblewrap nor Landlock works, run code unconfined instead of refusing "
             "(recorded in run.json and every episode; code can then read the answer key)")] = False,
) -> None:
    """Run AGENT on TASKS at every length and seed; results in OUT. With no options: the oracle
    on every task at 8k..256k, seeds 0-4. Exits 1 when the run stopped on a failing model
    provider."""
    from loca.episode import run_episode
    from loca.run_console import RunConsole
    from loca.runner import Breaker, RunDir, SettingsError, execute, explain

    if executor not in ("local", "ray"):
        raise typer.BadParameter(f"--executor is local or ray, not {executor!r}")
    if ray_address and executor != "ray":
        raise typer.BadParameter("--ray-address needs --executor ray")
    names = _task_names(tasks)
    for name in names:
        _check_agent(agent, _task(name))
    config = _run_config(names, agent, _parsed(parse_lengths, lengths), _parsed(parse_seeds, seeds), trials,
                         base_url=base_url, max_turns=max_turns, naming=naming, tool_filter=tool_filter,
                         timeouts={"connect_s": connect_timeout, "response_s": response_timeout},
                         strategy=strategy, strategy_config=strategy_config, strict=strict,
                         rate_limits={"max_in_flight": max_in_flight, "requests_per_minute": requests_per_minute,
                                      "tokens_per_minute": tokens_per_minute},
                         keep_worlds=keep_worlds)
    for warning in config.agent_config().warnings():
        complain(f"[yellow]warning:[/] {warning}")
    _sandbox(allow_unconfined_sandbox)
    console = RunConsole(_consoles()[0], out)
    try:
        outcome = execute(config, out, run_episode, processes, executor=executor,  # type: ignore[arg-type]
                          ray_address=ray_address, retry_errors=retry_errors,
                          breaker=Breaker() if stop_after_errors is None else Breaker(stop_after_errors),
                          on_start=console.start, on_result=console.episode)
    except SettingsError as exc:
        console.close()
        complain(f"loca: error: {out} holds a run with other settings; use another --out for these:")
        for line in exc.differences:
            complain(f"  {line}")
        raise typer.Exit(2) from None
    except KeyboardInterrupt:
        console.close()
        complain(console.interrupted())
        raise typer.Exit(130) from None
    console.close()
    records = None
    if verbose:
        logged = RunDir(out).logged()
        records = [r for e in RunDir(out).manifest() if (r := logged.get(e.episode_id))]
    console.report(outcome.summary, f"{agent} · {config.strategy}", records)
    if outcome.stopped:
        complain(f"loca: error: {explain(outcome.stopped, agent, base_url)}")
        raise typer.Exit(1)


def _run_config(names: list[str], agent: str, targets: list[int], seed_list: list[int], trials: int, *,
                timeouts: dict[str, float | None], rate_limits: dict[str, float | None],
                strategy: str | None, strategy_config: Path | None, **settings: Any) -> RunConfig:
    """The run's configuration from the command line; a setting it refuses is a bad option."""
    from pydantic import ValidationError

    from loca.runner import RunConfig
    from scaffolds.clients import RateLimits, Sampling, Timeouts
    from scaffolds.context import choose, load_file

    choice = _parsed(lambda s: choose(s, load_file(strategy_config) if strategy_config else None), strategy)
    paper = dict(choice.agent or {})
    try:
        return RunConfig(tasks=names, lengths=targets, seeds=seed_list, trials=trials, agent=agent,
                         timeouts=Timeouts(**{k: v for k, v in timeouts.items() if v is not None}),
                         strategy=choice.name, context=choice.context, rate_limits=RateLimits(**rate_limits),
                         **({"system_prompt": paper.pop("system_prompt"), "sampling": Sampling(**paper)}
                            if paper else {}), **settings)
    except ValidationError as exc:
        raise typer.BadParameter("; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}"
                                           for e in exc.errors())) from None


@app.command()
def report(
    run_dirs: Annotated[list[Path], typer.Argument(help="run directories to merge")],
    out: Annotated[Path | None, typer.Option(
        help="report folder (default: RUN_DIR/report for one run; needed for several)")] = None,
    trials_k: Annotated[list[int] | None, typer.Option(
        "--trials-k", min=1, help="k of pass@k and pass^k (repeat); default 1 and the most trials")] = None,
    compare: Annotated[tuple[str, str] | None, typer.Option(
        metavar="A B", help="paired bootstrap of strategy A's accuracy minus strategy B's")] = None,
) -> None:
    """Tables (Markdown, CSV, LaTeX) and plots (PNG, SVG) of one or more runs, merged when their
    task, checker and prompt versions agree (exit 2 otherwise)."""
    from loca.report import ReportError, load, write_report

    if out is None and len(set(run_dirs)) > 1:
        raise typer.BadParameter("several run directories need --out")
    try:
        data = load(run_dirs)
        written = write_report(data, out or run_dirs[0] / "report", trials_k or (), compare)
    except ReportError as exc:
        complain(f"loca: error: {exc}")
        raise typer.Exit(2) from None
    from rich.markup import escape

    for run in data.runs:
        if run.stored.unconfined:
            complain(f"[red]warning: {escape(str(run.root))} ran code without confinement (explicitly "
                     "allowed); its scores cannot be trusted[/]")
    typer.echo(written.tables[0].markdown())
    say(f"{len(written.tables)} tables and {sum(p.suffix == '.png' for p in written.files)} plots; "
        f"report in {written.markdown}")


@app.command()
def export(
    run_dirs: Annotated[list[Path], typer.Argument(help="run directories, exported in this order")],
    out: Annotated[Path, typer.Option(help="the file to write (replaced if present)")],
    fmt: Annotated[str, typer.Option("--format", help="jsonl or parquet")] = "jsonl",
    only: Annotated[str | None, typer.Option(help="success or failure: only the episodes that passed, "
                                                  "or only those that did not")] = None,
    terminal_state: Annotated[list[str] | None, typer.Option(
        metavar="STATE", help="only episodes that ended so (repeat for several), e.g. claimed_done")] = None,
) -> None:
    """Training data: one record per finished episode of the runs, with the messages the model
    was shown (OpenAI chat format, the strategies' view at its last request, then its last reply
    and results), the tool schemas, task, length, seed, agent, model, strategy, verdict, terminal
    state and metrics. Exit 2 on input that cannot be exported."""
    from rich.markup import escape

    from loca.export import ExportError, Filters
    from loca.export import export as write_export

    try:
        counts = write_export(run_dirs, out, fmt, Filters(only, frozenset(terminal_state or ())))
    except ExportError as exc:
        complain(f"loca: error: {escape(str(exc))}")
        raise typer.Exit(2) from None
    if counts.without_trajectory:
        complain(f"left out {counts.without_trajectory} episodes that ended before the agent loop ran")
    say(f"exported {counts.records} episodes to {out}")


@app.command()
def view(
    run_dirs: Annotated[list[Path], typer.Argument(help="run directories to show")],
    port: Annotated[int, typer.Option(min=1, max=65535)] = 8780,
    host: Annotated[str, typer.Option(help="a loopback address or localhost")] = "127.0.0.1",
) -> None:
    """Serve a page over the runs: a table of episodes with filters, and each episode's ledger,
    checks and context size per turn. Loopback only."""
    from loca.records import RunFileError
    from loca.view import Catalog, is_loopback, serve

    if not is_loopback(host):
        raise typer.BadParameter(f"the viewer serves loopback only (127.0.0.1, ::1, localhost), not {host!r}")
    try:
        catalog = Catalog(run_dirs)
    except RunFileError as exc:
        complain(f"loca: error: {exc}")
        raise typer.Exit(2) from None
    serve(catalog, host, port, announce=typer.echo)


@app.command()
def docs(
    port: Annotated[int, typer.Option(min=1, max=65535)] = 8000,
    build: Annotated[Path | None, typer.Option(
        metavar="DIR", help="build the site into DIR, strictly (a warning fails it), instead of serving it")] = None,
) -> None:
    """Show the documentation site on 127.0.0.1:PORT, rebuilt on every edit (`mkdocs serve`), or
    build it with --build. Its reference pages are generated from the code at each build. Needs a
    source checkout installed with `pip install -e '.[docs]'` (the site's sources are not packaged)."""
    import importlib.util
    import subprocess

    config = Path(__file__).resolve().parents[1] / "mkdocs.yml"
    if not config.is_file():
        raise BadInput(f"no documentation sources beside the installed package ({config} is missing): "
                       "run loca docs from a source checkout installed with pip install -e '.[docs]'")
    if importlib.util.find_spec("mkdocs") is None:
        raise BadInput("mkdocs is not installed: pip install -e '.[docs]'")
    action = (["build", "--strict", "--site-dir", str(build.resolve())] if build is not None
              else ["serve", "--dev-addr", f"127.0.0.1:{port}"])
    raise typer.Exit(subprocess.call([sys.executable, "-m", "mkdocs", *action, "--config-file", str(config)],
                                     cwd=config.parent))


def _progress() -> Progress:
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=_consoles()[0], transient=True,
                    disable=not sys.stderr.isatty())


if __name__ == "__main__":
    main()


def _run_async(coro: Any) -> Any:
    import asyncio

    return asyncio.run(coro)
