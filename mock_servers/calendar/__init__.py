"""Calendar mock server: the primary calendar of the world owner (Google Calendar-like)."""

from mock_servers.calendar import models as models
from mock_servers.calendar.server import build, toolbox

__all__ = ["build", "models", "toolbox"]
