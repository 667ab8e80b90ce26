"""set_conf_cr_ddl: the plan keeps its guarantees at every size; every deadline an e-mail
states has one reading; the checker accepts every documented normalisation of a right answer
and rejects wrong ones. (Oracle, mutants and lengths at every tier: the generic acceptance
suite.)"""

from __future__ import annotations

import asyncio
import random
from datetime import date, timedelta, timezone
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from envs.core.registry import get_task
from envs.set_conf_cr_ddl import ANSWER_KEY, FIRST_PAGE, INFO_FILE
from generators.common import seeded_faker
from generators.set_conf_cr_ddl import STREAMS
from generators.set_conf_cr_ddl.entities import AOE, NOW, TRACKS, in_range
from generators.set_conf_cr_ddl.plan import WorldPlan, default_misc, default_noise, plan_world, truth_events
from generators.set_conf_cr_ddl.render import conference_text, name_pool, when
from loca.core.clock import parse_instant
from loca.core.rng import WorldRng
from loca.core.world import World
from loca.validate import play_script
from scaffolds.oracles.set_conf_cr_ddl import WHEN, parse_when, statements
from tests.harness import task_call, world_copy

TASK = get_task("set_conf_cr_ddl")


def _plan(n: int, seed: int) -> WorldPlan:
    rngs = WorldRng("set_conf_cr_ddl", seed)
    return plan_world({name: rngs.stream(name) for name in STREAMS}, seeded_faker(rngs.stream("faker")),
                      n, default_noise(n), default_misc(n))


def _thread_statements(plan: WorldPlan, i: int) -> list[Any]:
    """(mail kind, deadline) of the target's own track, in sending order."""
    target = next(t for t in plan.targets if t.conference is plan.threads[i][0].conference)
    return [(m.kind, d) for m in plan.threads[i] for d in m.deadlines if d.track == target.track]


@pytest.mark.parametrize("n", [3, 4, 7, 16, 60, 130, 400, TASK.spec.scale.hi])
@pytest.mark.parametrize("seed", range(4))
def test_plan_guarantees(n: int, seed: int) -> None:
    plan = _plan(n, seed)
    targets, noise = plan.targets, plan.noise
    assert len(targets) == n and len(noise) == default_noise(n)
    acronyms = [c.acronym for c in [t.conference for t in targets] + noise]
    assert len({a.casefold() for a in acronyms}) == len(acronyms), "acronyms are unique"
    mine = {t.conference.acronym for t in targets}
    assert any(o.startswith(a) and o != a for a in mine for o in acronyms), "a target's acronym prefixes another"
    assert any(a.startswith(o) and o != a for a in mine for o in acronyms if o not in mine)
    finals = [t.final.at for t in targets]
    assert len(set(finals)) == n, "final deadlines are distinct"
    stated = [d for m in plan.mails for d in m.deadlines]
    assert all(in_range(d.at) for d in stated), "every deadline lies in now + [10 d, 80 d]"
    sent = [m.at for m in plan.mails]
    assert len(set(sent)) == len(sent) and max(sent) < NOW, "sending times are distinct and past"
    assert [m.at for m in plan.mails] == sorted(sent)
    assert all(t.final.track == t.track for t in targets)
    kinds = [[k for k, _ in _thread_statements(plan, i)] for i in range(n)]
    for i in range(n):
        assert _thread_statements(plan, i)[-1][1].at in set(finals), "the last statement is the truth"
    assert any("reminder" in seq and "extension" in seq and seq.index("reminder") < seq.index("extension")
               for seq in kinds), "a reminder of the superseded deadline precedes an extension"
    assert any(seq and seq[-1] == "extension" and _thread_statements(plan, i)[-1][1].zone == AOE
               for i, seq in enumerate(kinds)), "an extended deadline stated in AoE is final"
    corrected = [t for t in targets if t.flags.corrected]
    assert corrected and all(t.final.zone.kind == "utc" for t in corrected)
    assert any(t.final.zone == AOE for t in targets)
    others = [t for t in targets if t.flags.other_track]
    assert others
    for thread in plan.threads:
        conf = thread[0].conference
        assert conf is not None
        target = next(t for t in targets if t.conference is conf)
        latest = {d.track: d for m in thread for d in m.deadlines}
        assert all(d.track in conf.tracks for m in thread for d in m.deadlines)
        # another track's final deadline is an hour or more from the target's (one it superseded may not be)
        assert all(abs(d.at - target.final.at) >= timedelta(hours=1)
                   for d in latest.values() if d.track != target.track)
    assert any(m.deadlines for m in plan.mails if m.conference in noise), "noise conferences announce deadlines"
    assert len(plan.events) == 3 + n // 4
    assert any(a in e.summary for e in plan.events for a in mine), "an existing event names a target"
    newest = sorted(plan.mails, key=lambda m: m.at, reverse=True)[:FIRST_PAGE]
    assert len(plan.mails) > FIRST_PAGE
    assert any(not any(m in newest for m in thread) for thread in plan.threads), "the pagination trap"


def test_track_names_do_not_contain_each_other() -> None:
    assert not [(a, b) for a in TRACKS for b in TRACKS if a != b and a in b]


def test_same_seed_same_plan() -> None:
    assert truth_events(_plan(12, 3)) == truth_events(_plan(12, 3))
    assert truth_events(_plan(12, 4)) != truth_events(_plan(12, 3))


def test_more_noise_never_moves_the_targets() -> None:
    rngs = WorldRng("set_conf_cr_ddl", 1)

    def plan(noise: int) -> WorldPlan:
        return plan_world({name: rngs.stream(name) for name in STREAMS},
                          seeded_faker(rngs.stream("faker")), 10, noise, 3)

    assert truth_events(plan(5)) == truth_events(plan(30))


@pytest.mark.parametrize("seed", range(3))
def test_every_stated_deadline_has_one_reading(seed: int) -> None:
    """Each deadline e-mail, as rendered, states exactly its planned (track, instant) pairs,
    whatever the date, time and zone format drawn."""
    plan = _plan(40, seed)
    rng = random.Random(seed)
    names = name_pool(seeded_faker(rng))
    for mail in plan.mails:
        if mail.conference is None:
            continue
        text = conference_text(rng, names, mail)
        assert statements(text.body) == [(d.track, d.at) for d in mail.deadlines], text.body


def test_deadline_formats_round_trip() -> None:
    rng = random.Random(7)
    for mail in _plan(60, 2).mails:
        for d in mail.deadlines:
            for _ in range(4):
                written = when(rng, d)
                found = WHEN.search(written)
                assert found and found.group(0) in written and parse_when(found) == d.at, written


# ---------------------------------------------------------------- the checker

def _call(world: World, tool: str, **args: Any) -> Any:
    return task_call(world, TASK, tool, **args)


def _failed(world: World) -> list[str]:
    return TASK.check(world).failed_names()


@pytest.fixture(scope="module")
def blank(tmp_path_factory: pytest.TempPathFactory) -> World:
    return TASK.generate(tmp_path_factory.mktemp("blank") / "w", {"num_target": 4}, 5)


@pytest.fixture
def world(blank: World, tmp_path: Path) -> World:
    return world_copy(blank, tmp_path / "w")


def _expected(world: World) -> list[dict[str, str]]:
    return list(world.read_truth()["answer"][ANSWER_KEY])


def _create(world: World, title: str, start: str, end: str, zone: str | None = None) -> Any:
    extra = {"timeZone": zone} if zone else {}
    return _call(world, "calendar_create_event", summary=title, start={"dateTime": start, **extra},
                 end={"dateTime": end, **extra})


def _shifted(stamp: str, seconds: int = 0, offset_hours: int = 0) -> str:
    """`stamp` moved by `seconds`, written with a UTC offset of `offset_hours`."""
    moment = parse_instant(stamp) + timedelta(seconds=seconds)
    return moment.astimezone(timezone(timedelta(hours=offset_hours))).isoformat()


def _solve(world: World, title: str = "{acronym} camera-ready deadline", skip: int = -1,
           start_s: int = 0, end_s: int = 0, offset_hours: int = -12) -> None:
    for i, e in enumerate(_expected(world)):
        if i != skip:
            _create(world, title.format(acronym=e["acronym"]), _shifted(e["start"], start_s, offset_hours),
                    _shifted(e["end"], end_s, offset_hours))


def test_noop_fails_event_set_and_has_nothing_else_to_judge(world: World) -> None:
    assert asyncio.run(play_script(TASK, world, "noop")).failed_names() == ["event_set", "titles", "times"]


def test_checker_accepts_documented_normalisations(world: World) -> None:
    _solve(world, title="  {acronym}   Camera Ready DEADLINE ", start_s=59, end_s=20, offset_hours=9)
    (world.workspace / "notes.md").write_text("scratch work")
    assert _failed(world) == []


def test_times_in_any_offset_or_named_zone_are_the_same_instant(world: World) -> None:
    for e in _expected(world):
        start = parse_instant(e["start"]).astimezone(ZoneInfo("Asia/Kolkata"))
        _create(world, f"{e['acronym']} camera-ready deadline", start.replace(tzinfo=None).isoformat(),
                (start + timedelta(minutes=30)).replace(tzinfo=None).isoformat(), "Asia/Kolkata")
    assert _failed(world) == []


@pytest.mark.parametrize(("kwargs", "check"), [
    ({"start_s": 61, "end_s": 61}, "times"),
    ({"end_s": 90}, "times"),
    ({"start_s": 3 * 3600, "end_s": 3 * 3600}, "times"),  # at the deadline
    ({"title": "{acronym} camera-ready"}, "titles"),
    ({"title": "{acronym} camera-ready deadline reminder"}, "titles"),
    ({"skip": 0}, "event_set"),
    ({"title": "camera-ready deadline"}, ("event_set", "titles", "times")),  # no event to judge
])
def test_checker_rejects_wrong_events(world: World, kwargs: dict[str, Any], check: str | tuple[str, ...]) -> None:
    _solve(world, **kwargs)
    assert _failed(world) == ([check] if isinstance(check, str) else list(check))


def test_naive_times_read_in_the_calendar_zone_fail(world: World) -> None:
    for e in _expected(world):
        _create(world, f"{e['acronym']} camera-ready deadline", e["start"].removesuffix("Z"),
                e["end"].removesuffix("Z"))
    assert _failed(world) == ["times"]


def test_all_day_events_fail_times(world: World) -> None:
    _solve(world, skip=0)
    first = _expected(world)[0]
    day = first["start"][:10]
    _call(world, "calendar_create_event", summary=f"{first['acronym']} camera-ready deadline",
          start={"date": day}, end={"date": (date.fromisoformat(day) + timedelta(days=1)).isoformat()})
    assert _failed(world) == ["times"]


def test_duplicates_and_extra_events_fail_event_set(world: World) -> None:
    _solve(world)
    first = _expected(world)[0]
    _create(world, first["title"], first["start"], first["end"])
    assert _failed(world) == ["event_set"]


def test_an_event_naming_two_listed_acronyms_is_extra(world: World) -> None:
    _solve(world, skip=0)
    a, b = _expected(world)[:2]
    _create(world, f"{a['acronym']} and {b['acronym']} camera-ready deadline", a["start"], a["end"])
    assert _failed(world) == ["event_set"]


def test_a_longer_acronym_does_not_match_a_listed_one(world: World) -> None:
    """The acronym counts only as a whole word: `SRL ...` is not an event for `SR`."""
    _solve(world, skip=0)
    first = _expected(world)[0]
    _create(world, f"{first['acronym']}X camera-ready deadline", first["start"], first["end"])
    assert "event_set" in _failed(world)


def test_side_effects_are_caught(world: World) -> None:
    _solve(world)
    existing = _call(world, "calendar_list_events", timeMin="2000-01-01T00:00:00Z",
                     timeMax="2100-01-01T00:00:00Z")["items"]
    old = next(e for e in existing if e["created"] < "2025-09-15")  # made before the agent came
    _call(world, "calendar_delete_event", eventId=old["id"])
    assert _failed(world) == ["no_side_effects"]


@pytest.mark.parametrize("spoil", ["mail", "info"])
def test_mail_and_the_conference_list_must_stay(world: World, spoil: str) -> None:
    _solve(world)
    if spoil == "mail":
        _call(world, "email_delete_email", email_id="1")
    else:
        (world.workspace / INFO_FILE).write_text("nothing\n")
    assert _failed(world) == ["no_side_effects"]


def test_addresses_skip_name_suffixes() -> None:
    """Faker names may end in "Jr." or "Sr."; an address built from them stays valid (seed 117
    at 8k crashed the generator before)."""
    from generators.set_conf_cr_ddl.render import _surname

    assert _surname("Robert Phillips Jr.") == "phillips"
    assert _surname("Ann Lee-Park") == "lee-park"
    assert _surname("Dr. Ann Lee III") == "iii"
