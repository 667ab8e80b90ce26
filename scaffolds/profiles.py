"""Model profiles and the price table (see docs/concepts/model-clients.md), read from the package's `profiles.yaml`.

A profile names a model on one endpoint: provider, wire name (and aliases), base URL, where its
key is, context window, output limit and price key. Profiles are found by exact wire name and
endpoint, never by substrings of a name; a model without a profile gets no price, so its cost is
None rather than another model's.
"""

from __future__ import annotations

import datetime as dt
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, model_validator

if TYPE_CHECKING:
    from scaffolds.clients.base import Usage

PROFILES_FILE = Path(__file__).with_name("profiles.yaml")
Provider = Literal["openai_compat", "anthropic"]
DEFAULT_KEY_ENV: dict[Provider, str] = {"openai_compat": "OPENAI_API_KEY",
                                        "anthropic": "ANTHROPIC_API_KEY"}
_PER_MILLION = 1_000_000


class LongContextPrice(BaseModel):
    """The higher rates a provider charges for a request whose prompt is over a size (USD per
    million tokens)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    above_input_tokens: int = Field(gt=0)
    """The rates apply to a request with more prompt tokens than this (cache reads and writes
    included)."""
    input: float = Field(ge=0)
    cached_input: float = Field(ge=0)
    cache_write: float | None = Field(default=None, ge=0)
    output: float = Field(ge=0)


class Price(BaseModel):
    """USD per million tokens."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input: float = Field(ge=0)
    cached_input: float = Field(ge=0)
    """Prompt tokens read from the provider's cache."""
    cache_write: float | None = Field(default=None, ge=0)
    """Prompt tokens written to the cache; None: charged as `input`."""
    output: float = Field(ge=0)
    """Reasoning included."""
    effective: dt.date
    long_context: LongContextPrice | None = None
    """Rates for a long prompt; None: the same rates at every prompt size."""

    @model_validator(mode="after")
    def _long_context_costs_more(self) -> Price:
        long = self.long_context
        if long is None:
            return self
        pairs = {"input": (self.input, long.input), "output": (self.output, long.output),
                 "cached_input": (self.cached_input, long.cached_input)}
        if long.cache_write is not None:
            base_write = self.input if self.cache_write is None else self.cache_write
            pairs["cache_write"] = (base_write, long.cache_write)
        for name, (base, higher) in pairs.items():
            if higher < base:
                raise ValueError(f"long_context {name} {higher} is below the base rate {base}")
        return self

    def rates_for(self, prompt_tokens: int) -> Price | LongContextPrice:
        """The rates one request with `prompt_tokens` prompt tokens is charged at."""
        long = self.long_context
        return long if long is not None and prompt_tokens > long.above_input_tokens else self

    def cost_usd(self, usage: Usage) -> float:
        """Cost of one call's usage. `usage.input_tokens` holds every prompt token, cache reads
        and writes included; those two are charged at their own rates. With a long-context
        tier, a call whose prompt is over its threshold is charged the higher rates for all of
        its tokens, input and output; each call is priced by its own prompt (a provider's
        "session" is one request here: the gym sends the whole context with every call)."""
        rates = self.rates_for(usage.input_tokens)
        cached, written = usage.cached_input_tokens, usage.cache_write_tokens
        uncached = max(0, usage.input_tokens - cached - written)
        write_rate = rates.input if rates.cache_write is None else rates.cache_write
        return (uncached * rates.input + cached * rates.cached_input + written * write_rate
                + usage.output_tokens * rates.output) / _PER_MILLION


class ModelProfile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    id: str
    provider: Provider
    model: str
    """The wire name sent to the provider."""
    aliases: tuple[str, ...] = ()
    """Other wire names of the same model (dated snapshots)."""
    base_url: str | None = None
    """None: the provider SDK's default endpoint."""
    api_key_env: str | None = None
    """None: the provider's usual variable (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`)."""
    context_window: int = Field(gt=0)
    max_output_tokens: int = Field(gt=0)
    reasoning: bool = False
    """Takes reasoning settings (`reasoning_effort`, extended thinking)."""
    price: str | None = None
    """Key into the price table; None: no known price."""

    @property
    def key_env(self) -> str:
        return self.api_key_env or DEFAULT_KEY_ENV[self.provider]

    def answers_to(self, provider: str, model: str, base_url: str | None) -> bool:
        return (self.provider == provider and model in (self.model, *self.aliases)
                and _same_endpoint(self.base_url, base_url))


def _same_endpoint(a: str | None, b: str | None) -> bool:
    return (a or "").rstrip("/") == (b or "").rstrip("/")


class Registry(BaseModel):
    """The versioned registry: prices by key and profiles by id."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    version: Literal[1]
    prices: dict[str, Price]
    profiles: dict[str, ModelProfile]

    @model_validator(mode="before")
    @classmethod
    def _ids_from_keys(cls, data: object) -> object:
        if isinstance(data, dict) and isinstance(data.get("profiles"), dict):
            data = {**data, "profiles": {
                key: {"id": key, **value} if isinstance(value, dict) else value
                for key, value in data["profiles"].items()}}
        return data

    @model_validator(mode="after")
    def _consistent(self) -> Registry:
        names: dict[tuple[str, str, str], str] = {}
        for profile_id, profile in self.profiles.items():
            if profile.id != profile_id:
                raise ValueError(f"profile {profile_id!r} says its id is {profile.id!r}")
            if profile.price is not None and profile.price not in self.prices:
                raise ValueError(f"profile {profile.id!r}: unknown price key {profile.price!r}")
            for name in (profile.model, *profile.aliases):
                key = (profile.provider, name, (profile.base_url or "").rstrip("/"))
                if key in names:
                    raise ValueError(f"profiles {names[key]!r} and {profile.id!r} both answer "
                                     f"to {name!r} on the same endpoint")
                names[key] = profile.id
        return self

    def get(self, profile_id: str) -> ModelProfile:
        try:
            return self.profiles[profile_id]
        except KeyError:
            raise KeyError(f"unknown model profile {profile_id!r}; known: "
                           f"{', '.join(sorted(self.profiles))}") from None

    def find(self, provider: Provider, model: str, base_url: str | None) -> ModelProfile | None:
        """The profile of `model` (wire name or alias) at `base_url` (None: the default)."""
        return next((p for p in self.profiles.values()
                     if p.answers_to(provider, model, base_url)), None)

    def price_of(self, profile: ModelProfile | None) -> Price | None:
        return self.prices[profile.price] if profile and profile.price else None


@cache
def registry() -> Registry:
    """The package registry (read and validated once)."""
    return load_registry(PROFILES_FILE)


def load_registry(path: Path) -> Registry:
    return Registry.model_validate(yaml.safe_load(path.read_text(encoding="utf-8")))
