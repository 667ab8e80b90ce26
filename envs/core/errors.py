"""Exceptions of the environment API that the scaffold relies on."""

from __future__ import annotations


class EnvSetupError(RuntimeError):
    """`reset` could not build the episode (generation, measurement, server start, tool discovery)."""


class ToolInfraError(RuntimeError):
    """A tool could not run for infrastructure reasons (server crashed, unreachable, timed out).
    Distinct from a tool *error result*, which is normal agent feedback."""
