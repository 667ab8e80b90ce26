"""`loca view`: a local web page over run directories. A table of episodes with filters, and one
episode's whole ledger in order (messages, tool calls and results, strategy decisions, retries),
its verdict's checks and its context size per turn. `runs` reads the run directories, `timeline`
one ledger, `server` serves the page (assets in `static/`, nothing from the network) and the JSON
endpoints it pages through."""

from loca.view.runs import Catalog, NotFound
from loca.view.server import build_app, is_loopback, serve

__all__ = ["Catalog", "NotFound", "build_app", "is_loopback", "serve"]
