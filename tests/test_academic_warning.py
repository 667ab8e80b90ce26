"""academic_warning: the plan holds every guarantee at every size (thresholds kept clear, near
misses on each side, unique rounded drop ratios, missed exams, a latest student without history,
history-only students, a shared name); the dataset, read through the tools, gives the truth,
with the pagination trap and the retake table; the checker accepts the documented
normalisations of a right answer and rejects wrong ones, one test per rule. (Oracle, mutants and
lengths at every tier: the generic acceptance suite.)"""

from __future__ import annotations

import json
import re
from collections import Counter
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from envs.academic_warning import (
    CRITICAL,
    CRITICAL_KEY,
    DATASET,
    EXAM_TABLE,
    LATEST_FILE,
    LOG,
    REPORT,
    TRAP_PAGE,
    WARN,
)
from envs.core.registry import get_task
from generators.academic_warning import RETAKE_SHIFT, resolve_params, retake_score
from generators.academic_warning.plan import (
    MARGIN,
    MAX_STUDENTS,
    Plan,
    Student,
    num_exams,
    plan_world,
)
from generators.common import PersonNames, seeded_faker
from loca.core.outputs import csv_text
from loca.core.rng import WorldRng
from loca.core.world import World
from tests.harness import task_call
from tests.top_of_scale import top_world

TASK = get_task("academic_warning")


def _plan(n: int, seed: int, former: int = 2) -> Plan:
    rngs = WorldRng("academic_warning", seed)
    names = PersonNames(seeded_faker(rngs.stream("faker")), rngs.stream("names"))
    return plan_world(rngs, names, n, former)


@pytest.mark.parametrize("n", [40, 41, 100, 300, 600, TASK.spec.scale.hi])
@pytest.mark.parametrize("seed", range(5))
def test_plan_holds_every_guarantee(n: int, seed: int) -> None:
    plan = _plan(n, seed)
    ids = [s.student_id for s in plan.students]
    assert len(set(ids)) == len(ids) == n + 3 and all(re.fullmatch(r"S\d{5}", i) for i in ids)
    assert len(plan.months) == num_exams(n) == min(15, max(2, int(n / 40 + 0.5))) == len(set(plan.months))
    assert all(re.fullmatch(r"\d{4}", m) for m in plan.months) and len(plan.classes) >= 3
    assert [name for name, k in Counter(s.name for s in plan.students).items() if k > 1]
    latest = [s for s in plan.students if s.latest is not None]
    assert len(latest) == n and len([s for s in latest if not s.history]) == 1
    assert len([s for s in plan.students if s.latest is None and s.history]) == 3
    assert [s for s in plan.students if s.history and None in s.scores]
    drops = [d for s in latest if (d := s.drop) is not None]
    assert all(abs(d - t) >= MARGIN for d in drops for t in (WARN, CRITICAL))
    for t in (WARN, CRITICAL):
        assert [d for d in drops if MARGIN <= d - t <= Decimal("0.01")]
        assert [d for d in drops if MARGIN <= t - d <= Decimal("0.01")]
    listed = plan.listed()
    keys = [round(s.drop or Decimal(0), 4) for s in listed]
    assert len(set(keys)) == len(keys) and keys == sorted(keys, reverse=True)
    assert plan.critical() and len(plan.critical()) < len(listed)
    # the student listed just above 0.25 missed an exam: counted as a 0, it would leave the list
    near = [s for s in listed if s.drop is not None and s.latest and s.drop - WARN <= Decimal("0.01")]
    assert any(None in s.scores and 1 - s.latest / (sum(s.history, Decimal(0)) / len(s.scores)) <= WARN
               for s in near if s.latest)


def test_every_exam_precedes_now_at_the_most_exams() -> None:
    """Fifteen exams with skipped months would run past now for a few seeds (51 and 115 among
    the first 200); the run is moved earlier instead."""
    from generators.academic_warning import NOW

    for seed in (0, 51, 115):
        months = _plan(600, seed).months
        assert len(months) == 15 and list(months) == sorted(set(months))
        assert months[-1] <= f"{NOW.year % 100 - 1:02d}12"
        assert (seed == 0) == (months[0] == "2301")  # only a run that would pass now moves


@pytest.mark.parametrize("scores,retake", [(("70.0", "80.0"), "85.0"), (("95.0", "97.0"), "100.0"),
                                           (("100.0",) * 15, "90.0"), (("99.9",) * 14 + ("100.0",), "89.9")])
def test_a_retake_moves_its_students_mean_past_the_tolerance(scores: tuple[str, ...], retake: str) -> None:
    """Counted as an exam, a retake changes the student's hist_avg, even for a perfect student
    (whose capped retake would change nothing, and the retake mutant would pass)."""
    student = Student("S00001", "Ann Lee", "CLS-101", tuple(Decimal(x) for x in scores), Decimal("40.0"))
    got = retake_score(student)
    assert got == Decimal(retake)
    shift = abs((sum(student.history, got)) / (len(scores) + 1) - student.hist_avg)
    assert shift > RETAKE_SHIFT


def test_params_whose_students_outgrow_the_fixed_width_ids_are_refused() -> None:
    hi = TASK.spec.scale.hi
    most = MAX_STUDENTS - hi - 1  # the latest file, the former students and the one every world has
    assert resolve_params({"num_students": hi, "num_former_students": most})["num_former_students"] == most
    with pytest.raises(ValueError, match="do not fit the fixed-width ids"):
        resolve_params({"num_students": hi, "num_former_students": most + 1})


@pytest.mark.slow
def test_the_largest_scale_reaches_the_longest_tier(tmp_path: Path) -> None:
    """The top of the scale measures past 2M tokens (about 2.3M), so every long tier is reachable."""
    world = top_world(TASK, {"num_students": TASK.spec.scale.hi}, tmp_path / "hi", seed=1)
    assert (world.meta.env_description_tokens or 0) > 2_200_000


def test_the_instruction_has_one_reading_of_the_drop_ratio() -> None:
    """drop_ratio comes from the exact mean; only what is written is rounded; a missed exam is
    no score (the two readings of the old wording differed from 64K up)."""
    text = TASK.spec.instruction(None)  # type: ignore[arg-type]
    assert "drop_ratio from the unrounded hist_avg" in text and "round only what you write" in text
    assert "an exam a student missed has no row for them and is not a score" in text


# ------------------------------------------------------------------ a generated world

def _call(world: World, name: str, **args: Any) -> Any:
    return task_call(world, TASK, name, **args)


def _world(tmp_path: Path, n: int = 100, seed: int = 2) -> World:
    return TASK.generate(tmp_path / f"w{n}-{seed}", {"num_students": n}, seed)


def test_the_dataset_through_the_tools_gives_the_truth_and_the_trap(tmp_path: Path) -> None:
    world = _world(tmp_path)
    tables = [t["table_id"] for t in _call(world, "google_cloud_bigquery_list_tables", dataset_id=DATASET)["tables"]]
    exams = [t for t in tables if EXAM_TABLE.fullmatch(t)]
    assert len(exams) == num_exams(100) and "scores_template" in tables and "class_averages" in tables
    assert [t for t in tables if t.startswith("scores_") and t.endswith("_retake")]
    first = _call(world, "google_cloud_bigquery_list_tables", dataset_id=DATASET, max_results=TRAP_PAGE)
    assert set(exams) - {t["table_id"] for t in first["tables"]}
    union = " UNION ALL ".join(f"SELECT student_id, score FROM {DATASET}.{t}" for t in exams)
    found = _call(world, "google_cloud_bigquery_run_query", query=f"SELECT student_id, AVG(score) AS a FROM "
                  f"({union}) GROUP BY student_id ORDER BY student_id", max_results=10000)["rows"]
    averages = {r["student_id"]: r["a"] for r in found}
    truth = world.read_truth()
    for row in truth["answer"][REPORT.file]:
        assert abs(Decimal(str(averages[row["student_id"]])) - Decimal(row["hist_avg"])) <= Decimal("0.005")
    retake = next(t for t in tables if t.endswith("_retake"))
    retakers = {r["student_id"] for r in _call(world, "google_cloud_bigquery_run_query",
                                               query=f"SELECT student_id FROM {DATASET}.{retake}")["rows"]}
    assert retakers & {c["student_id"] for c in truth["answer"][CRITICAL_KEY]}
    header = (world.workspace / LATEST_FILE).read_text().splitlines()[0]
    assert header == "student_id,name,class_id,score" and LOG not in {
        entry["name"] for entry in _call(world, "google_cloud_logging_list_logs")["logs"]}


# ------------------------------------------------------------------ the checker

@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> World:
    return _world(tmp_path_factory.mktemp("aw"))


@pytest.fixture
def world(base: World, tmp_path: Path) -> World:
    import shutil

    shutil.copytree(base.root, tmp_path / "w")
    return World.load(tmp_path / "w")


def _failed(world: World) -> list[str]:
    verdict = TASK.check(world)
    assert not verdict.errored, verdict
    return verdict.failed_names()


def _rows(world: World) -> list[dict[str, str]]:
    rows: list[dict[str, str]] = world.read_truth()["answer"][REPORT.file]
    return rows


def _report(world: World, rows: list[list[Any]] | None = None, header: list[str] | None = None) -> None:
    cells = rows if rows is not None else [[r[h] for h in REPORT.headers] for r in _rows(world)]
    (world.workspace / REPORT.file).write_text(csv_text(header or REPORT.headers, cells))


def _log(world: World, message: str | None = None, severity: str = "CRITICAL", log: str = LOG,
         only: list[dict[str, str]] | None = None) -> None:
    for c in only if only is not None else world.read_truth()["answer"][CRITICAL_KEY]:
        text = message.format(**c) if message else json.dumps(c)
        _call(world, "google_cloud_logging_write_log", log_name=log, severity=severity, message=text)


def test_noop_fails_and_a_right_answer_passes(world: World) -> None:
    assert _failed(world) == ["header", "id_set", "values", "order", "critical_logs"]
    _report(world)
    _log(world)
    assert _failed(world) == []


def test_checker_accepts_exact_values_spacing_and_text_messages(world: World) -> None:
    exact = world.read_truth()["exact"]
    rows = [[f" {r['student_id']}", f"{r['name']} ", f"{r['score']}0",
             exact[r["student_id"]][0][:12], exact[r["student_id"]][1][:10]] for r in _rows(world)]
    _report(world, rows)
    _log(world, "Student {name} ({student_id}) dropped sharply")
    assert _failed(world) == []


def test_names_in_log_messages_are_matched_case_insensitively(world: World) -> None:
    _report(world)
    for c in world.read_truth()["answer"][CRITICAL_KEY]:
        _call(world, "google_cloud_logging_write_log", log_name=LOG, severity="CRITICAL",
              message=f"CRITICAL drop: {c['student_id']} {c['name'].upper()}")
    assert _failed(world) == []


@pytest.mark.parametrize("column,value", [("hist_avg", "+0.01"), ("drop_ratio", "+0.0001"), ("score", "+0.1")])
def test_values_off_the_tolerance_fail_values(world: World, column: str, value: str) -> None:
    rows = [[r[h] for h in REPORT.headers] for r in _rows(world)]
    k = REPORT.headers.index(column)
    rows[0][k] = str(Decimal(rows[0][k]) + Decimal(value))
    _report(world, rows)
    _log(world)
    assert _failed(world) == ["values"]


def test_a_wrong_name_fails_values(world: World) -> None:
    rows = [[r[h] for h in REPORT.headers] for r in _rows(world)]
    rows[1][1] = rows[1][1].split()[0]
    _report(world, rows)
    _log(world)
    assert _failed(world) == ["values"]


def test_missing_or_extra_students_fail_id_set_and_swaps_fail_order(world: World) -> None:
    rows = [[r[h] for h in REPORT.headers] for r in _rows(world)]
    _report(world, rows[:-1])
    _log(world)
    assert _failed(world) == ["id_set", "order"]
    _report(world, [rows[1], rows[0], *rows[2:]])
    assert _failed(world) == ["order"]


def test_renamed_header_fails_header(world: World) -> None:
    _report(world, header=["student_id", "name", "score", "hist_avg", "drop"])
    _log(world)
    assert _failed(world) == ["header"]


def test_log_entries_must_name_one_critical_student_once(world: World) -> None:
    critical = world.read_truth()["answer"][CRITICAL_KEY]
    _report(world)
    _log(world, "{student_id} dropped", only=critical)  # no name
    assert _failed(world) == ["critical_logs"]


def test_a_second_entry_or_a_shared_entry_fails_critical_logs(world: World) -> None:
    critical = world.read_truth()["answer"][CRITICAL_KEY]
    _report(world)
    _log(world)
    _log(world, only=critical[:1])
    assert _failed(world) == ["critical_logs"]


def test_entries_below_critical_or_about_others_fail_no_extra_logs(world: World) -> None:
    _report(world)
    _log(world)
    listed = {r["student_id"]: r["name"] for r in _rows(world)}
    critical = {c["student_id"] for c in world.read_truth()["answer"][CRITICAL_KEY]}
    other = next(i for i in listed if i not in critical)
    _log(world, severity="WARNING", only=[{"student_id": other, "name": listed[other]}])
    assert _failed(world) == ["no_extra_logs"]


def test_entries_in_another_log_or_a_changed_dataset_fail_no_side_effects(world: World) -> None:
    _report(world)
    _log(world)
    _log(world, log="exam_alerts")
    assert _failed(world) == ["no_side_effects"]


def test_a_changed_exam_table_fails_no_side_effects(world: World) -> None:
    _report(world)
    _log(world)
    table = next(t["table_id"] for t in _call(world, "google_cloud_bigquery_list_tables", dataset_id=DATASET)["tables"]
                 if EXAM_TABLE.fullmatch(t["table_id"]))
    _call(world, "google_cloud_bigquery_run_query", query=f"UPDATE {DATASET}.{table} SET score = 0 WHERE TRUE")
    assert _failed(world) == ["no_side_effects"]


def test_counting_a_missed_exam_as_zero_fails_id_set(tmp_path: Path) -> None:
    """In every world the mutant that averages over every exam table, a missed one as 0, drops
    the student just above 0.25 from the list."""
    import asyncio

    from loca.validate import play_script

    for n, seed in ((40, 0), (41, 3), (100, 2)):
        verdict = asyncio.run(play_script(TASK, _world(tmp_path, n, seed), "mutant:missed_as_zero"))
        assert "id_set" in verdict.failed_names(), (n, seed)
