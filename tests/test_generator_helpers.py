"""Helpers every generator shares."""

from __future__ import annotations

import random
import re

from generators.common import PersonNames, seeded_faker


def test_person_names_follow_the_stream_and_vary() -> None:
    names = PersonNames(seeded_faker(random.Random(1)), random.Random(2))
    drawn = [names.full() for _ in range(500)]
    again = PersonNames(seeded_faker(random.Random(9)), random.Random(2))
    assert drawn == [again.full() for _ in range(500)]  # the stream decides, not Faker's seed
    assert all(re.fullmatch(r"[A-Z][a-z]+ [A-Z][a-z]+", n) for n in drawn)
    assert len(set(drawn)) > 450
    other = PersonNames(seeded_faker(random.Random(1)), random.Random(3))
    assert [other.full() for _ in range(20)] != drawn[:20]
