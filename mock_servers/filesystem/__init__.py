"""Filesystem helper server: file and folder tools confined to the world's workspace."""

from mock_servers.filesystem.server import build, toolbox

__all__ = ["build", "toolbox"]
