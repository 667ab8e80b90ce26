"""Million-token model profiles and the long-context price tier."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from scaffolds.clients import Usage
from scaffolds.profiles import Price, registry

MILLION_TOKEN_PROFILES = {
    # id: (provider, wire names, base_url, window, max output)
    "claude-opus-4-6": ("anthropic", ("claude-opus-4-6",), None, 1_000_000, 128_000),
    "claude-sonnet-4-6": ("anthropic", ("claude-sonnet-4-6",), None, 1_000_000, 128_000),
    "claude-opus-5": ("anthropic", ("claude-opus-5",), None, 1_000_000, 128_000),
    "gpt-5.4": ("openai_compat", ("gpt-5.4",), None, 1_050_000, 128_000),
    "deepseek-v4-flash": ("openai_compat", ("deepseek-v4-flash",), "https://api.deepseek.com",
                          1_000_000, 384_000),
}


@pytest.mark.parametrize("profile_id", sorted(MILLION_TOKEN_PROFILES))
def test_each_million_token_profile_resolves_by_every_wire_name(profile_id: str) -> None:
    provider, names, base_url, window, max_output = MILLION_TOKEN_PROFILES[profile_id]
    reg = registry()
    for name in names:
        found = reg.find(provider, name, base_url)
        assert found is not None and found.id == profile_id
    profile = reg.get(profile_id)
    assert (profile.context_window, profile.max_output_tokens) == (window, max_output)
    assert reg.price_of(profile) is not None
    assert reg.find(provider, names[0], "http://localhost:8000/v1") is None


def usage(prompt: int, cached: int = 0, output: int = 2_000) -> Usage:
    return Usage(input_tokens=prompt, cached_input_tokens=cached, output_tokens=output,
                 reported=True)


# USD for a call with 100K and with 500K prompt tokens (20K of them cache reads) and 2K output,
# by hand from the list prices.
HAND_COSTS = {
    "claude-opus-4-6": ((80_000 * 5 + 20_000 * 0.5 + 2_000 * 25) / 1e6,
                        (480_000 * 5 + 20_000 * 0.5 + 2_000 * 25) / 1e6),
    "claude-sonnet-4-6": ((80_000 * 3 + 20_000 * 0.3 + 2_000 * 15) / 1e6,
                          (480_000 * 3 + 20_000 * 0.3 + 2_000 * 15) / 1e6),
    "claude-opus-5": ((80_000 * 5 + 20_000 * 0.5 + 2_000 * 25) / 1e6,
                      (480_000 * 5 + 20_000 * 0.5 + 2_000 * 25) / 1e6),
    # over 272K prompt tokens: 2x every input rate, 1.5x output, for the whole call
    "gpt-5.4": ((80_000 * 2.5 + 20_000 * 0.25 + 2_000 * 15) / 1e6,
                (480_000 * 5.0 + 20_000 * 0.5 + 2_000 * 22.5) / 1e6),
    "deepseek-v4-flash": ((80_000 * 0.14 + 20_000 * 0.0028 + 2_000 * 0.28) / 1e6,
                          (480_000 * 0.14 + 20_000 * 0.0028 + 2_000 * 0.28) / 1e6),
}


@pytest.mark.parametrize("profile_id", sorted(HAND_COSTS))
def test_cost_at_100k_and_500k_prompt_tokens_matches_the_hand_computation(
        profile_id: str) -> None:
    reg = registry()
    price = reg.price_of(reg.get(profile_id))
    assert price is not None
    at_100k, at_500k = HAND_COSTS[profile_id]
    assert price.cost_usd(usage(100_000, cached=20_000)) == pytest.approx(at_100k, rel=1e-12)
    assert price.cost_usd(usage(500_000, cached=20_000)) == pytest.approx(at_500k, rel=1e-12)


TIERED = {"input": 2.0, "cached_input": 0.2, "output": 12.0, "effective": "2026-02-19",
          "long_context": {"above_input_tokens": 200_000, "input": 4.0, "cached_input": 0.4,
                           "output": 18.0}}


def test_the_long_tier_starts_strictly_above_its_threshold_and_charges_the_whole_call() -> None:
    price = Price.model_validate(TIERED)
    at = price.cost_usd(usage(200_000, output=1_000))
    above = price.cost_usd(usage(200_001, output=1_000))
    assert at == pytest.approx((200_000 * 2.0 + 1_000 * 12.0) / 1e6)
    assert above == pytest.approx((200_001 * 4.0 + 1_000 * 18.0) / 1e6)


def test_the_long_tier_prices_cache_writes_at_its_own_rate_or_its_input_rate() -> None:
    call = Usage(input_tokens=300_000, cache_write_tokens=100_000, output_tokens=0, reported=True)
    no_write_rate = Price.model_validate(TIERED)
    assert no_write_rate.cost_usd(call) == pytest.approx(300_000 * 4.0 / 1e6)
    with_write_rate = Price.model_validate(
        {**TIERED, "cache_write": 2.5,
         "long_context": {**TIERED["long_context"], "cache_write": 5.0}})  # type: ignore[dict-item]
    assert with_write_rate.cost_usd(call) == pytest.approx(
        (200_000 * 4.0 + 100_000 * 5.0) / 1e6)


@pytest.mark.parametrize(("field", "value"), [("input", 1.0), ("output", 11.0),
                                              ("cached_input", 0.1),
                                              ("above_input_tokens", 0)])
def test_a_long_tier_cheaper_than_the_base_or_without_a_threshold_is_refused(
        field: str, value: float) -> None:
    bad = {**TIERED, "long_context": {**TIERED["long_context"], field: value}}  # type: ignore[dict-item]
    with pytest.raises(ValidationError, match=field if field != "above_input_tokens" else "greater"):
        Price.model_validate(bad)
