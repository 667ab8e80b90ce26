"""Strong or weak: whether bubblewrap can isolate children on this machine, found once per
process by trying it, or forced with `LOCA_SANDBOX=strong|weak` (strong then fails loudly)."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path

from mock_servers.sandbox.launch import Limits, Mode, SandboxError, bwrap_prefix, child_ids

ENV_MODE = "LOCA_SANDBOX"
_CHOICES = ("auto", "strong", "weak")
_PROBE_TIMEOUT_S = 10
log = logging.getLogger("loca.sandbox")


class SandboxUnavailable(SandboxError):
    """Strong mode was required but bubblewrap cannot run here."""


def sandbox_mode(requested: str | None = None) -> Mode:
    """The mode children run in: `requested` (a server's `sandbox` setting) or `LOCA_SANDBOX`
    forces one; by default strong where bubblewrap works, else weak (logged to stderr once)."""
    choice = requested or os.environ.get(ENV_MODE) or "auto"
    if choice not in _CHOICES:
        raise SandboxError(f"unknown sandbox mode '{choice}'; use {', '.join(_CHOICES)}")
    if choice == "weak":
        return "weak"
    problem = strong_problem()
    if problem is None:
        return "strong"
    if choice == "strong":
        raise SandboxUnavailable(f"strong mode required but bubblewrap cannot run: {problem}")
    _warn_weak(problem)
    return "weak"


@cache
def strong_problem() -> str | None:
    """Why bubblewrap cannot run a child here, or None when it can (tried once per process)."""
    try:
        with tempfile.TemporaryDirectory(prefix="loca-probe-") as tmp:
            workspace, scratch = Path(tmp, "workspace"), Path(tmp, "tmp")
            workspace.mkdir()
            scratch.mkdir()
            argv = [*bwrap_prefix(workspace, scratch, sys.executable, child_ids()),
                    *Limits(timeout_s=_PROBE_TIMEOUT_S).prlimit(), "true"]
            done = subprocess.run(argv, stdin=subprocess.DEVNULL, capture_output=True,
                                  timeout=_PROBE_TIMEOUT_S, env={"PATH": "/usr/bin:/bin"})
    except SandboxError as exc:
        return exc.message
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{type(exc).__name__}: {exc}"
    if done.returncode != 0:
        return done.stderr.decode("utf-8", "replace").strip() or f"exit status {done.returncode}"
    log.info("sandbox: strong (bubblewrap: no network, only the workspace and system files visible)")
    return None


@cache
def _warn_weak(problem: str) -> None:
    log.warning("sandbox: WEAK mode, bubblewrap cannot run here (%s); children get resource "
                "limits but no namespace isolation", problem)
