"""Every server: its tool schemas follow the exposure rules, random and malformed arguments give a
result or a readable error result (never a crash, an internal error or a secret), and the tool
catalogue that listing relies on is current. Each server is exercised on the smallest world of a
registered task that uses it (an empty world with its tables when none does yet)."""

from __future__ import annotations

import asyncio
import re
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from envs.core.registry import tasks
from generators.common import create_world
from loca.core.world import WorldMeta
from mock_servers.catalog import build, load
from mock_servers.gateway import Gateway, ToolSpec
from tests.acceptance.conftest import SERVER_NAMES, small_world
from tests.schemas import violations

pytestmark = pytest.mark.slow  # the acceptance matrix: every server

ERROR = re.compile(r"^Error \[(INVALID_ARGUMENT|NOT_FOUND|ALREADY_EXISTS|FAILED_PRECONDITION|"
                   r"PERMISSION_DENIED|UNAUTHENTICATED|RESOURCE_EXHAUSTED|DEADLINE_EXCEEDED|"
                   r"UNIMPLEMENTED)\]: \S+: .+", re.S)
SECRETS = ("pbkdf2_sha256$",)


@pytest.fixture(params=SERVER_NAMES, scope="module")
def gateway(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Gateway]:
    server = request.param
    root = tmp_path_factory.mktemp(server) / "world"
    user = next((t for t in tasks().values() if server in t.spec.servers.values()), None)
    if user is not None:
        world = small_world(user, root)
        keys = {k: v for k, v in user.spec.servers.items() if v == server}
    else:
        meta = WorldMeta(task="none", seed=0, params={}, now="2025-01-15T09:00:00Z", generator_version="0")
        world, db = create_world(root, meta, [server])
        db.dispose()
        keys = {server: server}
    gw = Gateway(world, keys)
    yield gw
    gw.close()


def test_schemas_follow_the_exposure_rules(gateway: Gateway) -> None:
    names = [s.name for s in gateway.specs]
    assert names == sorted(names) and len(names) == len(set(names)) and names
    for spec in gateway.specs:
        p = spec.parameters
        assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", spec.name)
        assert spec.description.startswith(f"[{spec.server}] ") and len(spec.description) <= 1024 + 20
        assert p["type"] == "object" and p["additionalProperties"] is False
        assert isinstance(p["properties"], dict) and isinstance(p["required"], list)
        assert "anyOf" not in p and "enum" not in p
        assert not violations(p), (spec.name, violations(p))
        for name, prop in p["properties"].items():
            assert prop.get("description"), (spec.name, name)


_JSON = st.recursive(st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=False)
                     | st.text(max_size=40),
                     lambda inner: (st.lists(inner, max_size=4)
                                    | st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                     max_leaves=10)
_STRINGS = ["", "INBOX", "Sheet1", "A1", "1", "../truth/truth.json", "/etc/passwd", "x" * 300]


def _value_for(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    kind = schema.get("type")
    if "enum" in schema:
        typed: st.SearchStrategy[Any] = st.sampled_from(schema["enum"])
    elif kind == "integer":
        typed = st.integers(-5, 400)
    elif kind == "number":
        typed = st.floats(-1e3, 1e3, allow_nan=False)
    elif kind == "boolean":
        typed = st.booleans()
    elif kind == "string":
        typed = st.sampled_from(_STRINGS) | st.text(max_size=30)
    elif kind == "array":
        typed = st.lists(_value_for(schema.get("items", {})), max_size=3)
    else:
        typed = _JSON
    return typed | _JSON


def _arguments(params: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    fields = {name: st.one_of(st.just(None), _value_for(schema)) for name, schema in params["properties"].items()}
    extra = st.dictionaries(st.sampled_from(["bogus", "limit", "id"]), _JSON, max_size=1)

    @st.composite
    def build_args(draw: Any) -> dict[str, Any]:
        args = {k: v for k, s in fields.items() if (v := draw(s)) is not None}
        return {**args, **draw(extra)}

    return build_args()


def _fuzz(gateway: Gateway, spec: ToolSpec) -> None:
    @settings(max_examples=25, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(args=_arguments(spec.parameters))
    def call(args: dict[str, Any]) -> None:
        outcome = asyncio.run(gateway.call(spec.name, args))
        assert isinstance(outcome.text, str) and outcome.text
        if outcome.is_error:
            assert ERROR.match(outcome.text), (spec.name, args, outcome.text[:300])
        else:
            assert not outcome.text.startswith("Error ["), (spec.name, outcome.text[:300])
        assert not any(s in outcome.text for s in SECRETS), (spec.name, "secret leaked")
        assert str(gateway.world.root) not in outcome.text, (spec.name, "host path leaked")

    call()


def test_random_and_malformed_arguments_never_crash(gateway: Gateway) -> None:
    for spec in gateway.specs:
        _fuzz(gateway, spec)


def test_unknown_tool_and_non_object_arguments(gateway: Gateway) -> None:
    outcome = asyncio.run(gateway.call("no_such_tool", {}))
    assert outcome.is_error and outcome.text.startswith("Error [NOT_FOUND]")
    some = gateway.specs[0].name
    outcome = asyncio.run(gateway.call(some, ["not", "an", "object"]))  # type: ignore[arg-type]
    assert outcome.is_error and outcome.text.startswith("Error [INVALID_ARGUMENT]")


def test_tool_catalogue_is_current() -> None:
    assert load() == build(), "the tool catalogue is stale: run `python -m mock_servers.catalog`"


def test_catalogue_names_every_server() -> None:
    assert sorted(load()) == SERVER_NAMES
