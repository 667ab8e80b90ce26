"""Snowflake mock server (8 tools, the reference's unprefixed names) over a SQL front end."""

from mock_servers.snowflake import models as models
from mock_servers.snowflake.server import build, toolbox

__all__ = ["build", "models", "toolbox"]
