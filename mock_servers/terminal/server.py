"""terminal: allow-listed command lines in the workspace, without a shell, in the sandbox."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import Field

from mock_servers.core.errors import Code, ToolFailure
from mock_servers.core.files import DISPLAY_ROOT
from mock_servers.core.toolkit import Call, Toolbox
from mock_servers.sandbox import CONFIG_MODE, DiskLimits, Limits, SandboxError, open_execution, sandbox_mode
from mock_servers.terminal.parse import REDIRECTS, parse
from mock_servers.terminal.rules import ALLOWED, BLOCKED_FLAGS, validate
from mock_servers.terminal.run import PYTHON_FLAGS, execute

toolbox = Toolbox("terminal", instructions=(
    f"Command lines run in {DISPLAY_ROOT} (the task files) without a shell; "
    "show_security_rules lists the allowed programs and limits."))
build = toolbox.build

MAX_COMMAND = 2048
CONFIG_TIMEOUT = "terminal_timeout_s"  # server config: seconds per command (1..300)
DEFAULT_TIMEOUT_S = 60
MAX_TIMEOUT_S = 300
STDERR_HEADER = "--- stderr ---"
_MODES = {
    "strong": "strong (bubblewrap: no network; only the workspace, a private /tmp and system "
              "files are visible)",
    "landlock": "landlock (no network; only the workspace, a private scratch and system files "
                "can be opened; other paths keep their names but refuse access)",
    "unconfined": "unconfined (resource limits and process clean-up only, explicitly requested: "
                  "nothing stops a program from reading other files)",
}


def _limits(config: dict[str, Any]) -> Limits:
    timeout = config.get(CONFIG_TIMEOUT, DEFAULT_TIMEOUT_S)
    if isinstance(timeout, bool) or not isinstance(timeout, int) or not 1 <= timeout <= MAX_TIMEOUT_S:
        raise SandboxError(f"{CONFIG_TIMEOUT} must be an integer from 1 to {MAX_TIMEOUT_S}")
    return Limits(timeout_s=timeout)


def render(stdout: str, stderr: str, code: int | None = None) -> str:
    """stdout, a `--- stderr ---` block when there is any, then `exit code: N` (when known)."""
    text = stdout if not stdout or stdout.endswith("\n") else stdout + "\n"
    if stderr:
        text += f"{STDERR_HEADER}\n{stderr}" + ("" if stderr.endswith("\n") else "\n")
    return text + f"exit code: {code}" if code is not None else text.rstrip("\n")


@toolbox.tool(rw="write", core=True, destructive=True, own_deadline=True,
              narrow_hint="narrow the output (head, tail, grep) or redirect it to a file")
def run_command(
    call: Call,
    command: Annotated[str, Field(min_length=1, max_length=MAX_COMMAND, description=(
        "the command line, e.g. `ls -la data` or `zip -r out.zip folder && unzip -l out.zip`"))],
) -> str:
    """Run a command line in /workspace, without a shell: words are split like a POSIX shell
    and `| && || ; > >> < 2> 2>&1` are handled by the server; $VAR, $(...), backticks, `&`,
    subshells and here-documents are rejected. Only allow-listed programs run (see
    show_security_rules); paths must stay inside /workspace; globs expand there, sorted.
    Timeout 60 s by default. Returns stdout, then a `--- stderr ---` block if any, then
    `exit code: N`; a non-zero exit is a normal result."""
    pipelines = parse(command)
    validate(call.world, pipelines)
    limits = _limits(call.config)
    with open_execution(call.world, call.config, limits) as ex:
        code = execute(ex, call.world, pipelines)
        stdout, stderr = ex.stdout(), ex.stderr()
    if code is None:
        partial = render(stdout, stderr) or "(no output)"
        raise ToolFailure(Code.DEADLINE_EXCEEDED,
                          f"the command did not finish within {limits.timeout_s:g} s and was "
                          f"stopped; output so far:\n{partial}",
                          hint="split the work into smaller commands")
    return render(stdout, stderr, code)


@toolbox.tool(rw="read")
def show_security_rules(call: Call) -> str:
    """Show what run_command allows: programs, blocked flags and syntax, limits and the
    sandbox level."""
    mode = sandbox_mode(call.config.get(CONFIG_MODE))
    blocked = "; ".join(f"{prog} {', '.join(flags)}" for prog, flags in BLOCKED_FLAGS.items())
    return "\n".join([
        f"Working directory: {DISPLAY_ROOT} (paths outside it are refused; /dev/null is allowed)",
        f"Allowed commands: {' '.join(ALLOWED)} (python runs with {' '.join(PYTHON_FLAGS)})",
        f"Blocked flags: {blocked}",
        f"Operators (run by the server, no shell): | && || ; {' '.join(REDIRECTS)}",
        "Rejected syntax: $VAR, ${...}, $(...), backticks, process substitution, &, ( ), here-documents",
        "Globs: * ? [...] expand inside the workspace, sorted; no match leaves the word as it is",
        f"Limits: command length {MAX_COMMAND} characters; {_limits(call.config).describe()}; "
        f"{DiskLimits.from_config(call.config).describe()}",
        f"Sandbox: {_MODES[mode]}",
    ])
