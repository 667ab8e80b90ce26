"""Canvas LMS mock server (tools keep the `canvas_` prefix)."""

from mock_servers.canvas import models as models
from mock_servers.canvas.server import build, toolbox

__all__ = ["build", "models", "toolbox"]
