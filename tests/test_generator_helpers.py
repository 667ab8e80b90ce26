"""Helpers every generator shares."""

from __future__ import annotations

import random
import re
from pathlib import Path

import pytest

from generators.common import PersonNames, seeded_faker, templates
from loca.core.cache import CACHE_DIR_ENV


def test_person_names_follow_the_stream_and_vary() -> None:
    names = PersonNames(seeded_faker(random.Random(1)), random.Random(2))
    drawn = [names.full() for _ in range(500)]
    again = PersonNames(seeded_faker(random.Random(9)), random.Random(2))
    assert drawn == [again.full() for _ in range(500)]  # the stream decides, not Faker's seed
    assert all(re.fullmatch(r"[A-Z][a-z]+ [A-Z][a-z]+", n) for n in drawn)
    assert len(set(drawn)) > 450
    other = PersonNames(seeded_faker(random.Random(1)), random.Random(3))
    assert [other.full() for _ in range(20)] != drawn[:20]


def test_compiled_templates_are_reused_across_processes_and_a_bad_entry_is_recompiled(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "templates"
    folder.mkdir()
    (folder / "greet.j2").write_text("Hello {{ name }}!\n{% for i in range(2) %}{{ i }}{% endfor %}")
    monkeypatch.setenv(CACHE_DIR_ENV, str(tmp_path / "cache"))
    templates.cache_clear()
    first = templates(str(folder)).get_template("greet.j2").render(name="Ada")
    [entry] = (tmp_path / "cache" / "templates").iterdir()
    templates.cache_clear()  # a new process: the compiled code comes from the cache
    assert templates(str(folder)).get_template("greet.j2").render(name="Ada") == first == "Hello Ada!\n01"
    entry.write_bytes(b"not bytecode")
    templates.cache_clear()
    assert templates(str(folder)).get_template("greet.j2").render(name="Bo") == "Hello Bo!\n01"
    (folder / "greet.j2").write_text("Bye {{ name }}")  # a changed source is compiled again
    templates.cache_clear()
    assert templates(str(folder)).get_template("greet.j2").render(name="Bo") == "Bye Bo"
    templates.cache_clear()
