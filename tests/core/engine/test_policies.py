"""The policies as pure functions: a verdict from a definition and a moment, with no
engine around them (the engine's own tests cover how the verdicts are applied)."""

from __future__ import annotations

import random
from datetime import timedelta

from taskgui.core.engine import policies
from taskgui.core.events import SkipReason
from taskgui.core.recurrence import Every, EveryMode
from taskgui.core.states import MisfirePolicy, RunOutcome, TaskState
from tests.helpers.factories import T0, at, fixed_retry, make_spec

MINUTE = timedelta(minutes=1)


def test_run_once_stands_for_the_latest_missed_occurrence() -> None:
    spec = make_spec(recurrence=Every(MINUTE), misfire=MisfirePolicy.RUN_ONCE)
    verdict = policies.misfire(spec, T0, at(150), run_all_limit=100)
    assert verdict.run
    assert verdict.skipped is not None
    assert (verdict.skipped.count, verdict.skipped.reason) == (2, SkipReason.MISFIRE)
    assert verdict.slot_at == at(120)


def test_skip_counts_the_late_ones_and_queues_the_next() -> None:
    spec = make_spec(
        recurrence=Every(MINUTE), misfire=MisfirePolicy.SKIP, misfire_grace=timedelta(seconds=10)
    )
    verdict = policies.misfire(spec, T0, at(150), run_all_limit=100)
    assert not verdict.run
    assert verdict.skipped is not None and verdict.skipped.count == 3
    assert verdict.slot_at == at(180)


def test_skip_gives_the_latest_back_when_it_is_inside_its_grace() -> None:
    """00:02 is 30 s late at 00:02:30, inside the minute's grace: it is not missed."""
    spec = make_spec(recurrence=Every(MINUTE), misfire=MisfirePolicy.SKIP)
    verdict = policies.misfire(spec, T0, at(150), run_all_limit=100)
    assert not verdict.run
    assert verdict.skipped is not None and verdict.skipped.count == 2  # 00:00, 00:01
    assert verdict.slot_at == at(120)  # judged again at once, on its own


def test_skip_of_a_one_off_task_leaves_nothing_to_queue() -> None:
    verdict = policies.misfire(make_spec(misfire=MisfirePolicy.SKIP), T0, at(5), 100)
    assert (verdict.run, verdict.slot_at) == (False, None)


def test_run_all_beyond_its_limit_drops_the_oldest() -> None:
    spec = make_spec(recurrence=Every(MINUTE), misfire=MisfirePolicy.RUN_ALL)
    verdict = policies.misfire(spec, T0, at(600), run_all_limit=4)
    assert verdict.run
    assert verdict.skipped is not None and verdict.skipped.count == 7  # 11 due, 4 run
    assert verdict.slot_at == at(420)


def test_overlap_skip_counts_every_passed_occurrence() -> None:
    spec = make_spec(recurrence=Every(MINUTE))
    skipped, next_at = policies.skip_passed(spec, T0, at(90), SkipReason.OVERLAP)
    assert (skipped.count, skipped.reason, next_at) == (2, SkipReason.OVERLAP, at(120))


def test_after_run_retries_then_exhausts() -> None:
    spec = make_spec(retry=fixed_retry(max_attempts=2, delay=10))
    rng = random.Random(1)
    first = policies.after_run(
        spec, attempt=1, outcome=RunOutcome.FAILED, now=T0, rng=rng, idle=True, fixed_delay=False
    )
    assert first.retry_delay == timedelta(seconds=10)
    last = policies.after_run(
        spec, attempt=2, outcome=RunOutcome.FAILED, now=T0, rng=rng, idle=True, fixed_delay=False
    )
    assert last.retry_delay is None
    assert last.exhausted is not None and last.exhausted.attempts == 2
    assert last.terminal is TaskState.EXHAUSTED


def test_after_run_plans_a_fixed_delay_from_the_end() -> None:
    spec = make_spec(recurrence=Every(MINUTE, EveryMode.FIXED_DELAY))
    verdict = policies.after_run(
        spec,
        attempt=1,
        outcome=RunOutcome.SUCCEEDED,
        now=at(7),
        rng=random.Random(1),
        idle=True,
        fixed_delay=True,
    )
    assert (verdict.next_at, verdict.terminal) == (at(67), None)


def test_after_run_of_a_busy_task_decides_nothing_more() -> None:
    verdict = policies.after_run(
        make_spec(),
        attempt=1,
        outcome=RunOutcome.SUCCEEDED,
        now=T0,
        rng=random.Random(1),
        idle=False,
        fixed_delay=False,
    )
    assert verdict == policies.AfterRun()
