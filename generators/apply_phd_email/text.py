"""The generator's jinja2 templates, each loaded once (the environment would check the file
again on every lookup, thousands of times in a large world)."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from jinja2 import Template

from generators.common import templates

_FOLDER = str(Path(__file__).parent / "templates")


@cache
def _template(name: str) -> Template:
    return templates(_FOLDER).get_template(name)


def render(name: str, /, **values: object) -> str:
    """The template `name` filled with `values`, without surrounding blank space."""
    return _template(name).render(**values).strip()
