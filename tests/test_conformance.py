"""Every tool of every server: schemas follow the exposure rules, and random or malformed
arguments give a result or a readable error result, never a crash or an internal error."""

from __future__ import annotations

import asyncio
import json
import re
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from envs.canvas_arrange_exam import TASK
from mock_servers.gateway import Gateway

ERROR = re.compile(r"^Error \[(INVALID_ARGUMENT|NOT_FOUND|ALREADY_EXISTS|FAILED_PRECONDITION|"
                   r"PERMISSION_DENIED|UNAUTHENTICATED|RESOURCE_EXHAUSTED|DEADLINE_EXCEEDED|"
                   r"UNIMPLEMENTED)\]: \S+: .+", re.S)


@pytest.fixture(scope="module")
def gateway(tmp_path_factory) -> Gateway:
    world = TASK.generate(tmp_path_factory.mktemp("conf") / "world", {"num_courses": 4}, 0, None)
    gw = Gateway(world, TASK.servers)
    yield gw
    gw.close()


def _walk(node: Any, path: str = "") -> list[str]:
    """Rule violations inside a parameter schema."""
    problems: list[str] = []
    if isinstance(node, dict):
        for banned in ("$ref", "$defs", "title", "oneOf", "allOf", "not", "ge", "le"):
            if banned in node and not (banned == "title" and path.endswith(".properties")):
                problems.append(f"{path}: has {banned}")
        if "default" in node and node["default"] is None:
            problems.append(f"{path}: null default")
        if node.get("type") == "array" and "items" not in node:
            problems.append(f"{path}: array without items")
        if node.get("type") == "object" and "properties" not in node and "additionalProperties" not in node:
            problems.append(f"{path}: open object")
        for key, value in node.items():
            problems += _walk(value, f"{path}.{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            problems += _walk(value, f"{path}[{i}]")
    return problems


def test_schemas_follow_the_exposure_rules(gateway):
    names = [s.name for s in gateway.specs]
    assert names == sorted(names) and len(names) == len(set(names))
    assert len(names) >= 60
    for spec in gateway.specs:
        p = spec.parameters
        assert re.fullmatch(r"[a-zA-Z0-9_-]{1,64}", spec.name)
        assert spec.description.startswith(f"[{spec.server}] ") and len(spec.description) <= 1024 + 20
        assert p["type"] == "object" and p["additionalProperties"] is False
        assert isinstance(p["properties"], dict) and isinstance(p["required"], list)
        assert "anyOf" not in p and "enum" not in p
        assert not _walk(p), (spec.name, _walk(p))
        for name, prop in p["properties"].items():
            assert prop.get("description"), (spec.name, name)


_JSON = st.recursive(st.none() | st.booleans() | st.integers(-10**6, 10**6) | st.floats(allow_nan=False)
                     | st.text(max_size=40),
                     lambda inner: (st.lists(inner, max_size=4)
                                    | st.dictionaries(st.text(max_size=8), inner, max_size=4)),
                     max_leaves=10)


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
        typed = st.sampled_from(["", "INBOX", "exam_schedule.xlsx", "Sheet1", "A1", "../truth/truth.json",
                                 "/etc/passwd", "1", "x" * 300]) | st.text(max_size=30)
    elif kind == "array":
        typed = st.lists(_value_for(schema.get("items", {})), max_size=3)
    else:
        typed = _JSON
    return typed | _JSON


def _arguments(spec_params: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    props = spec_params["properties"]
    fields = {name: st.one_of(st.just(None), _value_for(schema)) for name, schema in props.items()}
    extra = st.dictionaries(st.sampled_from(["bogus", "limit", "id"]), _JSON, max_size=1)

    @st.composite
    def build(draw: Any) -> dict[str, Any]:
        args = {k: v for k, s in fields.items() if (v := draw(s)) is not None}
        return {**args, **draw(extra)}

    return build()


def _fuzz(gateway: Gateway, spec: Any) -> None:
    """Random and malformed arguments for one tool: a result or a readable error, never more."""

    @settings(max_examples=25, deadline=None, database=None, suppress_health_check=list(HealthCheck))
    @given(args=_arguments(spec.parameters))
    def call(args: dict[str, Any]) -> None:
        outcome = asyncio.run(gateway.call(spec.name, args))
        assert isinstance(outcome.text, str) and outcome.text
        if outcome.is_error:
            assert ERROR.match(outcome.text), (spec.name, args, outcome.text)
        else:
            assert not outcome.text.startswith("Error ["), (spec.name, outcome.text)
        assert "pbkdf2_sha256$" not in outcome.text, (spec.name, "password hash leaked")

    call()


def test_random_and_malformed_arguments_never_crash(gateway):
    for spec in gateway.specs:
        _fuzz(gateway, spec)
    # the servers are still up and answering normally (random calls may have logged out)
    outcome = asyncio.run(gateway.call("canvas_canvas_health_check", {}))
    assert not outcome.is_error and json.loads(outcome.text)["status"] == "ok"


def test_unknown_tool_and_non_object_arguments(gateway):
    outcome = asyncio.run(gateway.call("no_such_tool", {}))
    assert outcome.is_error and outcome.text.startswith("Error [NOT_FOUND]")
    outcome = asyncio.run(gateway.call("email_get_emails", ["not", "an", "object"]))  # type: ignore[arg-type]
    assert outcome.is_error and outcome.text.startswith("Error [INVALID_ARGUMENT]")
