"""Knowledge-graph memory server (entities, observations, relations; official memory server
tool names)."""

from mock_servers.memory import models as models
from mock_servers.memory.server import build, toolbox

__all__ = ["build", "models", "toolbox"]
