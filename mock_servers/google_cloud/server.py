"""The google_cloud server (41 tools): BigQuery, Cloud Storage, Cloud Logging and Compute
Engine in one project, each area in its own module."""

from __future__ import annotations

from mock_servers.google_cloud import bigquery as bigquery
from mock_servers.google_cloud.base import toolbox

build = toolbox.build

__all__ = ["bigquery", "build", "toolbox"]
