"""canvas_arrange_exam end to end without a model: the oracle passes, the no-op agent and every
failure-mode mutant fail the check they target, and the checker accepts every documented
normalisation of a right answer while rejecting wrong ones."""

from __future__ import annotations

import asyncio
from datetime import date, time
from pathlib import Path

import pytest
from openpyxl import load_workbook

from envs.canvas_arrange_exam import TASK
from loca.core.lengths import TIERS, parse_length
from loca.core.world import World
from loca.validate import play_script, run_validation
from mock_servers.core.files import save_workbook
from mock_servers.gateway import Gateway
from scaffolds.oracles import expected_failures, scripts_for


def _play(root: Path, agent: str, n: int, seed: int) -> World:
    world = TASK.generate(root, {"num_courses": n}, seed, None)
    asyncio.run(play_script(TASK, world, agent))
    return world


def test_every_agent_has_a_target_check():
    agents = set(scripts_for(TASK.name))
    assert agents == set(expected_failures(TASK.name)) | {"oracle"} and len(agents) == 10


@pytest.mark.parametrize("n,seed", [(3, 0), (5, 1), (9, 2), (16, 3), (40, 4), (120, 0)])
def test_oracle_passes_and_every_mutant_fails_its_check(tmp_path, n, seed):
    assert asyncio.run(play_script(TASK, TASK.generate(tmp_path / "o", {"num_courses": n}, seed, None),
                                   "oracle")) == ()
    for agent, target in expected_failures(TASK.name).items():
        world = TASK.generate(tmp_path / agent.replace(":", "_"), {"num_courses": n}, seed, None)
        verdict_failed = asyncio.run(play_script(TASK, world, agent))
        assert target in verdict_failed, (agent, verdict_failed)
        assert not TASK.check(world).errored


def test_every_tier_and_seed_oracle_passes_mutants_fail_lengths_within_5_percent():
    """The acceptance matrix: 7 tiers x 5 seeds, each world within 5% of its target; there the
    oracle passes and the no-op agent and every mutant fail the check they target."""
    targets = [parse_length(t) for t in TIERS]
    outcomes = run_validation(TASK, targets, list(range(5)))
    assert len(outcomes) == 7 * 5 * 10
    assert all(o.ok for o in outcomes), [o for o in outcomes if not o.ok]
    worlds = {(o.length, o.seed): o.measured for o in outcomes}
    assert len(worlds) == 35
    assert all(abs(m - t) <= 0.05 * t for (t, _), m in worlds.items()), worlds


@pytest.fixture
def solved(tmp_path) -> World:
    return _play(tmp_path / "w", "oracle", 8, 5)


def _edit_sheet(world: World, edit) -> None:  # type: ignore[no-untyped-def]
    path = world.workspace / "exam_schedule.xlsx"
    wb = load_workbook(path)
    edit(wb.worksheets[0])
    save_workbook(wb, path, world.clock.at(0))


def _failed(world: World) -> list[str]:
    return TASK.check(world).failed_names()


def test_checker_accepts_documented_normalisations(solved):
    def loosen(ws) -> None:  # type: ignore[no-untyped-def]
        for row in ws.iter_rows(min_row=2):
            code, _, _, email, kind, day, start, duration, location, source, credit = row
            email.value = email.value.upper()
            kind.value = kind.value.lower().replace("-", " ")
            source.value = source.value.upper()
            location.value = f"  {location.value}  "
            duration.value = str(duration.value)
            credit.value = float(credit.value)
            if day.value != "TBD":
                month, dom, year = (int(p) for p in day.value.split("/"))
                day.value = date(year, month, dom) if dom % 2 else f"{month}/{dom}/{year}"
            else:
                day.value = "tbd"
            if start.value not in ("TBD", "tbd") and start.value.startswith("0"):
                start.value = start.value[1:]
            elif start.value not in ("TBD", "tbd"):
                hour, minute = (int(p) for p in start.value.split(":"))
                start.value = time(hour, minute)

    _edit_sheet(solved, loosen)
    assert _failed(solved) == []


@pytest.mark.parametrize("column,value,check", [
    (8, "120 min", "values"),       # unit in an integer column
    (6, "2025-02-04", "values"),    # wrong date format
    (7, "2:00 PM", "values"),       # 12-hour time
    (9, "", "values"),              # empty cell where GT has a value
    (5, "Open", "values"),          # not the exam type
])
def test_checker_rejects_wrong_cells(solved, column, value, check):
    def spoil(ws) -> None:  # type: ignore[no-untyped-def]
        target = next(r for r in ws.iter_rows(min_row=2) if r[5].value != "TBD")
        target[column - 1].value = value

    _edit_sheet(solved, spoil)
    assert check in _failed(solved)


def test_checker_rejects_duplicate_rows_and_guessed_tbd(solved):
    _edit_sheet(solved, lambda ws: ws.append([c.value for c in ws[2]]))
    assert "row_keys" in _failed(solved)


def test_tbd_must_stay_tbd(tmp_path):
    world = _play(tmp_path / "w", "oracle", 8, 1)

    def guess(ws) -> None:  # type: ignore[no-untyped-def]
        for row in ws.iter_rows(min_row=2):
            if row[8].value == "TBD":
                row[8].value = "Room 101, Baker Hall"

    _edit_sheet(world, guess)
    assert "values" in _failed(world)


def test_side_effects_are_caught_but_scratch_files_are_allowed(solved):
    (solved.workspace / "notes.md").write_text("scratch work")
    assert TASK.check(solved).passed
    gateway = Gateway(solved, TASK.servers)
    try:
        outcome = asyncio.run(gateway.call("email_send_email", {
            "to": "someone@example.com", "subject": "hi", "body": "hello"}))
    finally:
        gateway.close()
    assert not outcome.is_error
    assert _failed(solved) == ["no_side_effects"]


def test_unreadable_workbook_fails_cleanly(solved):
    (solved.workspace / "exam_schedule.xlsx").write_bytes(b"not a zip")
    verdict = TASK.check(solved)
    assert not verdict.passed and not verdict.errored
    assert "file_header" in verdict.failed_names()
