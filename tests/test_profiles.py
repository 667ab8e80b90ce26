"""Model profiles, the price table, and the clients an agent string makes from them."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import ValidationError

from scaffolds.clients import (
    AnthropicClient,
    OpenAICompatClient,
    Sampling,
    Usage,
    client_from_agent_string,
)
from scaffolds.profiles import Price, Registry, load_registry, registry
from tests.fake_llm import FakeLLM, MakeClient, completion
from tests.test_scaffold_openai import request

PRICE = {"input": 3.0, "cached_input": 0.3, "cache_write": 3.75, "output": 15.0,
         "effective": "2025-09-29"}
PROFILE = {"provider": "anthropic", "model": "claude-x", "context_window": 200000,
           "max_output_tokens": 64000, "price": "x"}


def a_registry(**changes: Any) -> dict[str, Any]:
    data: dict[str, Any] = {"version": 1, "prices": {"x": dict(PRICE)},
                            "profiles": {"claude-x": dict(PROFILE)}}
    data.update(changes)
    return data


def test_the_package_registry_is_consistent() -> None:
    reg = registry()
    for profile_id, profile in reg.profiles.items():
        assert profile.id == profile_id
        assert profile.price in reg.prices
        assert profile.max_output_tokens <= profile.context_window
    for price in reg.prices.values():
        assert price.cached_input <= price.input <= price.output
        assert price.effective <= dt.date.today()


def test_cost_charges_cache_reads_and_writes_at_their_own_rates() -> None:
    price = Price.model_validate(PRICE)
    usage = Usage(input_tokens=10_000, cached_input_tokens=6_000, cache_write_tokens=3_000,
                  output_tokens=2_000, reported=True)
    assert price.cost_usd(usage) == pytest.approx(
        (1_000 * 3.0 + 6_000 * 0.3 + 3_000 * 3.75 + 2_000 * 15.0) / 1e6)
    no_write_rate = Price.model_validate({**PRICE, "cache_write": None})
    assert no_write_rate.cost_usd(usage) == pytest.approx(
        (4_000 * 3.0 + 6_000 * 0.3 + 2_000 * 15.0) / 1e6)


def test_profiles_are_found_by_exact_name_or_alias_at_their_endpoint() -> None:
    reg = registry()
    sonnet = reg.get("claude-sonnet-4-5")
    assert reg.find("anthropic", "claude-sonnet-4-5-20250929", None) is sonnet
    assert reg.find("anthropic", "claude-sonnet-4-5", "http://127.0.0.1:8000") is None
    assert reg.find("anthropic", "claude-sonnet", None) is None  # no substring matching
    assert reg.find("openai_compat", "claude-sonnet-4-5", None) is None
    deepseek = reg.get("deepseek-chat")
    assert reg.find("openai_compat", "deepseek-chat", "https://api.deepseek.com/") is deepseek
    assert reg.find("openai_compat", "deepseek-chat", None) is None
    with pytest.raises(KeyError, match="unknown model profile 'nope'"):
        reg.get("nope")


@pytest.mark.parametrize(("change", "says"), [
    ({"profiles": {"claude-x": {**PROFILE, "price": "missing"}}}, "unknown price key"),
    ({"profiles": {"claude-x": PROFILE, "other": {**PROFILE, "aliases": []}}}, "both answer"),
    ({"profiles": {"claude-x": {**PROFILE, "tokenizr": "x"}}}, "Extra inputs"),
    ({"prices": {"x": {**PRICE, "input": -1}}}, "greater than or equal"),
    ({"version": 2}, "version"),
    ({"profiles": {"claude-x": {**PROFILE, "id": "claude-y"}}}, "says its id is"),
])
def test_a_bad_registry_is_refused(change: dict[str, Any], says: str) -> None:
    with pytest.raises(ValidationError, match=says):
        Registry.model_validate(a_registry(**change))


def test_a_registry_file_loads(tmp_path: Path) -> None:
    path = tmp_path / "profiles.yaml"
    path.write_text(yaml.safe_dump(a_registry()), encoding="utf-8")
    loaded = load_registry(path)
    assert loaded.price_of(loaded.get("claude-x")) == Price.model_validate(PRICE)


@pytest.fixture
def keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "DEEPSEEK_API_KEY"):
        monkeypatch.setenv(name, "sk-test")


@pytest.mark.usefixtures("keys")
def test_agent_strings_make_clients_with_their_profile() -> None:
    reg = registry()
    client = client_from_agent_string("anthropic:claude-haiku-4-5-20251001")
    assert isinstance(client, AnthropicClient)
    assert (client.model, client.max_output_tokens, client.price) == (
        "claude-haiku-4-5-20251001", 64000, reg.prices["claude-haiku-4-5"])
    unknown = client_from_agent_string("anthropic:claude-unreleased")
    assert (unknown.max_output_tokens, unknown.price) == (None, None)
    gpt = client_from_agent_string("openai:gpt-4o")
    assert isinstance(gpt, OpenAICompatClient) and gpt.price == reg.prices["gpt-4o"]
    local = client_from_agent_string("openai:gpt-4o", base_url="http://127.0.0.1:8000/v1")
    assert local.price is None and local.max_output_tokens is None
    deepseek = client_from_agent_string("profile:deepseek-chat")
    assert isinstance(deepseek, OpenAICompatClient)
    assert (deepseek.model, deepseek.price) == ("deepseek-chat", reg.prices["deepseek-v3.2"])
    assert str(deepseek._sdk.base_url).startswith("https://api.deepseek.com")
    proxied = client_from_agent_string("profile:claude-opus-4-5", base_url="http://proxy:1")
    assert (proxied.max_output_tokens, proxied.price) == (64000, None)


def test_agent_strings_need_their_key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ValueError, match="ANTHROPIC_API_KEY is not set"):
        client_from_agent_string("anthropic:claude-sonnet-4-5")
    monkeypatch.delenv("DEEPSEEK_API_KEY", raising=False)
    with pytest.raises(ValueError, match="DEEPSEEK_API_KEY is not set"):
        client_from_agent_string("profile:deepseek-chat")
    with pytest.raises(ValueError, match="unknown model profile"):
        client_from_agent_string("profile:nope")
    with pytest.raises(ValueError, match="unsupported agent string"):
        client_from_agent_string("anthropic:")


def test_a_thinking_budget_excludes_sampling_knobs_and_fits_the_output() -> None:
    with pytest.raises(ValidationError, match="excludes temperature"):
        Sampling(reasoning_budget_tokens=2048, temperature=0.2)
    with pytest.raises(ValidationError, match="below max_output_tokens"):
        Sampling(reasoning_budget_tokens=4096, max_output_tokens=4096)
    with pytest.raises(ValidationError):
        Sampling(reasoning_budget_tokens=512)


@pytest.mark.asyncio
@pytest.mark.parametrize("stream", [True, False])
async def test_openai_calls_are_priced_from_the_table_and_capped(
        fake_llm: FakeLLM, make_client: MakeClient, stream: bool) -> None:
    price = registry().prices["gpt-4.1"]
    fake_llm.push(completion("ok", usage={"prompt_tokens": 5000, "completion_tokens": 300,
                                          "prompt_tokens_details": {"cached_tokens": 4000}}))
    result = await make_client(stream=stream, price=price, max_output_tokens=32768).generate(
        request(max_output_tokens=100_000))
    assert result.cost_source == "table"
    assert result.cost_usd == pytest.approx((1000 * 2.0 + 4000 * 0.5 + 300 * 8.0) / 1e6)
    assert fake_llm.requests[0]["max_completion_tokens"] == 32768


@pytest.mark.asyncio
async def test_a_provider_reported_cost_wins_over_the_table(fake_llm: FakeLLM,
                                                            make_client: MakeClient) -> None:
    fake_llm.push(completion("ok", usage={"prompt_tokens": 10, "completion_tokens": 3,
                                          "cost": 0.0042}))
    result = await make_client(price=registry().prices["gpt-4o"]).generate(request())
    assert (result.cost_usd, result.cost_source) == (0.0042, "provider")
