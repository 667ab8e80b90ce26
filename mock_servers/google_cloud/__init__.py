"""Google Cloud mock server: BigQuery over a SQL front end, Cloud Storage, Cloud Logging and
Compute Engine (41 tools, names prefixed by service)."""

from mock_servers.google_cloud import models as models
from mock_servers.google_cloud.server import build, toolbox

__all__ = ["build", "models", "toolbox"]
