"""The google_cloud server (41 tools): BigQuery, Cloud Storage, Cloud Logging and Compute
Engine in one project, each area in its own module."""

from __future__ import annotations

from mock_servers.google_cloud import bigquery as bigquery
from mock_servers.google_cloud import compute as compute
from mock_servers.google_cloud import logging_tools as logging_tools
from mock_servers.google_cloud import storage as storage
from mock_servers.google_cloud.base import toolbox

build = toolbox.build

__all__ = ["bigquery", "build", "compute", "logging_tools", "storage", "toolbox"]
