"""Which confinement children get, decided once per process: strong (bubblewrap) where it runs,
else landlock (Landlock and seccomp, no privileges needed), else a refusal. Unconfined runs
happen only on explicit request: `LOCA_SANDBOX=unconfined`, or `LOCA_ALLOW_UNCONFINED_SANDBOX=1`
(what `loca run --allow-unconfined-sandbox` sets) letting the automatic choice fall back to it.
`LOCA_SANDBOX=strong|landlock|unconfined` forces a mode, and a forced mode that cannot be had
fails loudly."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
import tempfile
from functools import cache
from pathlib import Path

from mock_servers.sandbox.confine import landlock_abi, stage
from mock_servers.sandbox.launch import Launcher, Limits, Mode, SandboxError

ENV_MODE = "LOCA_SANDBOX"
ENV_ALLOW_UNCONFINED = "LOCA_ALLOW_UNCONFINED_SANDBOX"
CHOICES = ("auto", "strong", "landlock", "unconfined")
_PROBE_TIMEOUT_S = 10
log = logging.getLogger("loca.sandbox")


class SandboxUnavailable(SandboxError):
    """The mode asked for (or any confinement at all) cannot be had on this machine."""


def sandbox_mode(requested: str | None = None) -> Mode:
    """The mode children run in: `requested` (a server's `sandbox` setting) or `LOCA_SANDBOX`
    forces one; by default the strongest this machine offers."""
    choice = requested or os.environ.get(ENV_MODE) or "auto"
    if choice not in CHOICES:
        raise SandboxError(f"unknown sandbox mode '{choice}'; use {', '.join(CHOICES)}")
    if choice == "unconfined":
        return _chosen("unconfined")
    strong = strong_problem() if choice in ("auto", "strong") else None
    if choice in ("auto", "strong") and strong is None:
        return _chosen("strong")
    if choice == "strong":
        raise SandboxUnavailable(f"strong mode required but bubblewrap cannot run here: {strong}")
    landlock = landlock_problem()
    if landlock is None:
        return _chosen("landlock")
    if choice == "landlock":
        raise SandboxUnavailable(f"landlock mode required but unavailable here: {landlock}")
    if os.environ.get(ENV_ALLOW_UNCONFINED) == "1":
        return _chosen("unconfined")
    raise SandboxUnavailable(
        f"no confinement for code is available here (bubblewrap: {strong}; Landlock: {landlock}); "
        "install bubblewrap or use a kernel with Landlock, or run unconfined on explicit request "
        f"({ENV_MODE}=unconfined, or loca run --allow-unconfined-sandbox)")


def recorded_mode() -> Mode | None:
    """The mode this process's code servers use by default, for run records; None where they
    refuse to run code."""
    try:
        return sandbox_mode()
    except SandboxError:
        return None


def describe(mode: Mode) -> str:
    """One line on what `mode` confines on this machine."""
    if mode == "strong":
        return ("strong (bubblewrap: own mount, network and process namespaces; only the system, "
                "the workspace and a private /tmp visible)")
    if mode == "unconfined":
        return ("UNCONFINED (explicitly requested: code can read and write whatever the gym's user "
                "can, including the answer key; limits and process clean-up only)")
    abi = landlock_abi()
    signals = "signals confined" if abi >= 6 else "signals kept from the gym by the child's own uid" \
        if os.geteuid() == 0 else "signals NOT confined (Landlock ABI < 6): code may signal the gym"
    return (f"landlock (Landlock ABI {abi}: only the system, the workspace and a private scratch "
            f"can be opened; seccomp refuses every new socket; {signals})")


@cache
def _chosen(mode: Mode) -> Mode:
    """The mode, announced once per process (a warning when unconfined)."""
    level = logging.WARNING if mode == "unconfined" else logging.INFO
    log.log(level, "sandbox: %s", describe(mode))
    return mode


@cache
def strong_problem() -> str | None:
    """Why bubblewrap cannot run a child here, or None when it can (tried once per process)."""
    return _probe("strong")


@cache
def landlock_problem() -> str | None:
    """Why a Landlock child cannot run here, or None when it can (tried once per process)."""
    if landlock_abi() < 1:
        return "Landlock is not enabled in this kernel (Linux 5.13+ with landlock in the LSM list)"
    return _probe("landlock")


def _probe(mode: Mode) -> str | None:
    """Start `true` in `mode` with the whole launch (launcher, limits, identity, confinement)."""
    try:
        with tempfile.TemporaryDirectory(prefix="loca-probe-") as tmp:
            workspace, scratch = Path(tmp, "workspace"), Path(tmp, "tmp")
            workspace.mkdir()
            scratch.mkdir()
            launcher = Launcher(mode, workspace, scratch, os.path.abspath(sys.executable),
                                Limits(timeout_s=_PROBE_TIMEOUT_S), "UTC", 0)
            head, extra = launcher.prefix()
            done = subprocess.run([*head, *stage(["true"])], stdin=subprocess.DEVNULL, capture_output=True,
                                  timeout=_PROBE_TIMEOUT_S, env={"PATH": "/usr/bin:/bin"}, **extra)
    except SandboxError as exc:
        return exc.message
    except (OSError, subprocess.SubprocessError) as exc:
        return f"{type(exc).__name__}: {exc}"
    if done.returncode != 0:
        return done.stderr.decode("utf-8", "replace").strip() or f"exit status {done.returncode}"
    return None
