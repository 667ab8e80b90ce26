"""The environment server: many episodes over HTTP for RL trainers and other frameworks
(create a session from task, length and seed; its tools over MCP and plain JSON; grade it;
delete it). `loca env-server` runs it."""

from loca.envserver.app import build_app
from loca.envserver.serve import TOKEN_ENV, ServerSettings, serve
from loca.envserver.sessions import AtCapacity, SessionPool, UnknownSession

__all__ = ["TOKEN_ENV", "AtCapacity", "ServerSettings", "SessionPool", "UnknownSession", "build_app", "serve"]
