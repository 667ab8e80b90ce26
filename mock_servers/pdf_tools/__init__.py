"""PDF tools over workspace files (pdf-tools server names): read, inspect, merge, extract pages
and search with paged, persistent search sessions."""

from mock_servers.pdf_tools import models as models
from mock_servers.pdf_tools.server import build, toolbox

__all__ = ["build", "models", "toolbox"]
