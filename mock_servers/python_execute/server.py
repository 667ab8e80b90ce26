"""python_execute: run a Python script in the sandbox and report its console output."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from mock_servers.core.files import DISPLAY_ROOT
from mock_servers.core.toolkit import Call, Toolbox
from mock_servers.core.types import Int
from mock_servers.sandbox import SCRIPT_FLAGS, Execution, Limits, Stage, open_execution, safe_filename

toolbox = Toolbox("python_execute", instructions=(
    f"Python scripts run in a sandbox whose working directory is {DISPLAY_ROOT} (the task files)."))
build = toolbox.build

MAX_CODE_CHARS = 1_000_000
DEFAULT_TIMEOUT_S = 30
MAX_TIMEOUT_S = 120


# Source code may hold any character Python accepts (a form feed, an escape in a literal).
@toolbox.tool(rw="write", core=True, destructive=True, narrow_hint="print less",
              raw_text=("code",), own_deadline=True)
def python_execute(
    call: Call,
    code: Annotated[str, Field(min_length=1, max_length=MAX_CODE_CHARS,
                               description="the Python 3 source to run as a script")],
    filename: Annotated[str | None, Field(description=(
        "name of the script file, shown in tracebacks; reduced to letters, digits, '_', '.' "
        "and '-' (at most 64 characters, ending in .py; default script.py)"))] = None,
    timeout: Annotated[Int, Field(ge=1, le=MAX_TIMEOUT_S, description=(
        f"wall-clock limit in seconds (default {DEFAULT_TIMEOUT_S}, max {MAX_TIMEOUT_S})"))]
        = DEFAULT_TIMEOUT_S,
) -> str:
    """Run Python code as a script with the gym's Python (openpyxl and the other installed
    packages available). The working directory is /workspace, so relative paths reach the
    task files; /tmp is private scratch, emptied after each run; there is no network. Each call
    is a fresh process (no state kept between calls). Returns `=== STDOUT ===` and
    `=== STDERR ===` sections (each capped, keeping head and tail), `No console output
    produced.` when both are empty, then `=== EXECUTION INFO ===` with the return code,
    execution time and timeout. A non-zero exit is a normal result showing the traceback; on
    timeout the process is killed and `=== EXECUTION TIMEOUT ===` comes with the output so far."""
    with open_execution(call.world, call.config, Limits(timeout_s=timeout)) as ex:
        script = ex.write_script(safe_filename(filename), code)
        returncode = ex.run([Stage([*ex.python(*SCRIPT_FLAGS), script])])
        return _report(ex, returncode, timeout)


def _report(ex: Execution, returncode: int | None, timeout: int) -> str:
    lines: list[str] = []
    if returncode is None:
        lines += ["=== EXECUTION TIMEOUT ===",
                  f"The script did not finish within {timeout} seconds and was stopped; "
                  "the output it produced until then follows."]
    stdout, stderr = ex.stdout(), ex.stderr()
    if stdout:
        lines += ["=== STDOUT ===", stdout.removesuffix("\n")]
    if stderr:
        lines += ["=== STDERR ===", stderr.removesuffix("\n")]
    if not stdout and not stderr:
        lines.append("No console output produced.")
    lines += ["=== EXECUTION INFO ===",
              f"Return code: {'none (stopped at the timeout)' if returncode is None else returncode}",
              f"Execution time: {ex.elapsed:.2f} seconds",
              f"Timeout limit: {timeout} seconds"]
    return "\n".join(lines)
