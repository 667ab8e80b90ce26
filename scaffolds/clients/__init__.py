"""Model clients behind one interface, and how to build one from an agent string."""

from __future__ import annotations

import os
from typing import Any

from scaffolds.clients.base import (
    Attempt,
    AttemptError,
    GenerateRequest,
    GenerateResult,
    LLMCallError,
    ModelClient,
    Sampling,
    Usage,
)
from scaffolds.clients.openai_compat import OpenAICompatClient
from scaffolds.clients.retry import Retrier, RetryPolicy, Timeouts
from scaffolds.clients.scripted import GeneratorPolicy, ScriptedClient

__all__ = [
    "API_KEY_ENV", "Attempt", "AttemptError", "GenerateRequest", "GenerateResult",
    "GeneratorPolicy", "LLMCallError", "ModelClient", "OpenAICompatClient", "Retrier",
    "RetryPolicy", "Sampling", "ScriptedClient", "Timeouts", "Usage",
    "client_from_agent_string",
]

API_KEY_ENV = "OPENAI_API_KEY"
"""Where `openai:MODEL` agents find their API key unless told otherwise."""


def client_from_agent_string(agent: str, base_url: str | None = None,
                             api_key_env: str = API_KEY_ENV,
                             **options: Any) -> OpenAICompatClient:
    """Build a client for `openai:MODEL`; `options` go to `OpenAICompatClient`.

    The API key is read from the environment variable `api_key_env`, which must be set (use any
    placeholder value for local servers that ignore keys).
    """
    provider, _, model = agent.partition(":")
    if provider != "openai" or not model:
        raise ValueError(f"unsupported agent string {agent!r}; expected 'openai:MODEL'")
    api_key = os.environ.get(api_key_env)
    if not api_key:
        raise ValueError(f"environment variable {api_key_env} is not set (API key for {agent})")
    return OpenAICompatClient(model, api_key=api_key, base_url=base_url, **options)
