"""E-mail mock server (IMAP/SMTP-like mailbox tools, unprefixed names)."""

from mock_servers.email import domain as domain
from mock_servers.email import models as models
from mock_servers.email.server import build, toolbox

__all__ = ["build", "domain", "models", "toolbox"]
