"""E-mail tools: one mailbox per account, IMAP/SMTP-like operations, unprefixed names. Each
module registers the tools of one resource on the shared `toolbox`."""

from mock_servers.email.server import accounts, drafts, files, folders, messages, sending
from mock_servers.email.server.base import build, toolbox

__all__ = ["accounts", "build", "drafts", "files", "folders", "messages", "sending", "toolbox"]
