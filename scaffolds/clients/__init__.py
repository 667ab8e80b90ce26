"""Model clients behind one interface, and how to build one from an agent string."""

from __future__ import annotations

import os
from typing import Any

from scaffolds.clients.anthropic_client import AnthropicClient
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
from scaffolds.clients.ratelimit import RateLimits, limiter_for
from scaffolds.clients.retry import Retrier, RetryPolicy, Timeouts
from scaffolds.clients.scripted import GeneratorPolicy, ScriptedClient
from scaffolds.profiles import DEFAULT_KEY_ENV, ModelProfile, Provider, registry

__all__ = [
    "LLM_AGENTS", "AnthropicClient", "Attempt", "AttemptError", "GenerateRequest",
    "GenerateResult", "GeneratorPolicy", "LLMCallError", "ModelClient", "OpenAICompatClient",
    "RateLimits", "Retrier", "RetryPolicy", "Sampling", "ScriptedClient", "Timeouts", "Usage",
    "agent_key_env", "agent_profile", "client_from_agent_string", "is_llm_agent", "rate_group",
]

LLM_AGENTS = "openai:MODEL, anthropic:MODEL or profile:ID"
_PROVIDERS: dict[str, Provider] = {"openai": "openai_compat", "anthropic": "anthropic"}


def is_llm_agent(agent: str) -> bool:
    """`agent` names a model (`openai:`, `anthropic:` or `profile:` and a name), not a script."""
    kind, _, name = agent.partition(":")
    return bool(name) and (kind in _PROVIDERS or kind == "profile")


def _resolve(agent: str, base_url: str | None) -> tuple[Provider, str, str, ModelProfile | None]:
    """Provider, wire model, key variable and profile (if any) of an LLM agent string."""
    kind, _, name = agent.partition(":")
    if kind == "profile" and name:
        try:
            profile = registry().get(name)
        except KeyError as exc:
            raise ValueError(exc.args[0]) from None
        if base_url is not None and not profile.answers_to(profile.provider, profile.model,
                                                           base_url):
            # the same model elsewhere (a proxy, a local server): its limits, not its price
            profile = profile.model_copy(update={"base_url": base_url, "price": None})
        return profile.provider, profile.model, profile.key_env, profile
    if kind not in _PROVIDERS or not name:
        raise ValueError(f"unsupported agent string {agent!r}; expected {LLM_AGENTS}")
    provider = _PROVIDERS[kind]
    return provider, name, DEFAULT_KEY_ENV[provider], registry().find(provider, name, base_url)


def agent_profile(agent: str, base_url: str | None = None) -> ModelProfile | None:
    """The model profile of an LLM agent string at `base_url`; None when it has none."""
    return _resolve(agent, base_url)[3]


def agent_key_env(agent: str) -> str:
    """The environment variable holding the API key of an LLM agent string."""
    return _resolve(agent, None)[2]


def rate_group(agent: str, base_url: str | None = None) -> str:
    """The rate group of an LLM agent string: its provider, endpoint and key variable."""
    provider, _, key_env, profile = _resolve(agent, base_url)
    return _group(provider, base_url or (profile.base_url if profile else None), key_env)


def _group(provider: Provider, base_url: str | None, key_env: str) -> str:
    return f"{provider}|{base_url or ''}|{key_env}"


def client_from_agent_string(agent: str, base_url: str | None = None,
                             api_key_env: str | None = None, rate_limits: RateLimits | None = None,
                             **options: Any) -> OpenAICompatClient | AnthropicClient:
    """A client for `openai:MODEL`, `anthropic:MODEL` or `profile:ID`; `options` go to the
    client's constructor.

    The model's profile, when it has one at this endpoint, caps the output and prices the calls;
    a `profile:ID` also gives the endpoint and the key variable. The API key is read from
    `api_key_env` (default: the provider's or the profile's), which must be set (any placeholder
    for local servers that ignore keys). With `rate_limits`, every attempt waits for a permit of
    the process's limiter of the agent's rate group (`ratelimit.limiter_for`).
    """
    provider, model, key_env, profile = _resolve(agent, base_url)
    key_env = api_key_env or key_env
    api_key = os.environ.get(key_env)
    if not api_key:
        raise ValueError(f"environment variable {key_env} is not set (API key for {agent})")
    if profile is not None:
        options = {"max_output_tokens": profile.max_output_tokens,
                   "price": registry().price_of(profile), **options}
        base_url = base_url or profile.base_url
    if rate_limits is not None:  # the group as `rate_group` names it, without resolving again
        options["limiter"] = limiter_for(_group(provider, base_url, key_env), rate_limits)
    client_type = AnthropicClient if provider == "anthropic" else OpenAICompatClient
    return client_type(model, api_key=api_key, base_url=base_url, **options)
