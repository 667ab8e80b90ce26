"""The world plan of canvas_arrange_exam keeps its guarantees at every size."""

from datetime import date

import pytest

from generators.canvas_arrange_exam.plan import LISTING_PAGE, plan_world, truth_rows
from generators.common import seeded_faker
from loca.core.rng import WorldRng


def _plan(n, seed):
    rngs = WorldRng("canvas_arrange_exam", seed)
    streams = {name: rngs.stream(name) for name in ("courses", "people", "modifiers")}
    return plan_world(streams, seeded_faker(rngs.stream("faker")), n, 10, date(2025, 1, 15),
                      "America/Chicago")


@pytest.mark.parametrize("n", [3, 4, 6, 10, 15, 40, 160, 300, 400])
@pytest.mark.parametrize("seed", range(6))
def test_guarantees(n, seed):
    plan = _plan(n, seed)
    courses = plan.courses
    assert len(courses) == n
    assert len({c.base_code for c in courses}) == n
    assert len({c.base_name for c in courses}) == n
    cats = [c.category for c in courses]
    assert "email" in cats and cats.count("announcement") >= 2
    if n >= 6:
        assert any(c in ("no_final", "exempt", "past") for c in cats)
    if n >= 15:
        assert {"no_final", "exempt", "past"} <= set(cats)
        assert any(c.final and c.included and c.final.day is None for c in courses)
    included = [c for c in courses if c.included]
    assert any(c.corrected for c in included)
    assert any(c.final.location is None for c in included)
    starts = [c.final.starts_at for c in courses if c.final and c.final.starts_at]
    assert len(starts) == len(set(starts))
    for c in courses:
        if c.corrected:
            assert c.announced.day == c.final.day and c.announced.start != c.final.start
    rows = truth_rows(plan)
    dated = [r for r in rows if r["Final Date (MM/DD/YYYY)"] != "TBD"]
    assert [r["Course Code"] for r in dated] != sorted(r["Course Code"] for r in dated)
    assert all(r["Course Code"] not in {o.code.rsplit("-", 1)[0] for o in plan.others} for r in rows)
    assert LISTING_PAGE == 10


def test_same_seed_same_plan_and_more_distractors_do_not_shift_courses():
    a, b = _plan(12, 3), _plan(12, 3)
    assert truth_rows(a) == truth_rows(b)
    assert truth_rows(_plan(12, 4)) != truth_rows(a)
