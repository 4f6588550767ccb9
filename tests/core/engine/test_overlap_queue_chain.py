"""``--overlap queue`` with runs longer than the interval (an outsider's trial).

Every minute, each run taking longer: every occurrence comes due while a run goes on,
so under ``queue`` each waits for the run before it and runs late by design. Until
2026-12-04 the occurrence planned after such a late dispatch was already past, and was
skipped as a *misfire* ("taskgui was not running, the machine slept, or the clock
jumped"), the one that should have waited with it; nothing was down. Now the latest
one that passed waits, and the ones before it are missed for the overlap.
"""

from __future__ import annotations

import random
from dataclasses import replace
from datetime import timedelta

import pytest

from taskgui.core.conditions import RunConditions, SystemConditions
from taskgui.core.engine.engine import Engine
from taskgui.core.events import OccurrencesSkipped, RunDispatched, SkipReason
from taskgui.core.recurrence import Every
from taskgui.core.spread import Spread
from taskgui.core.states import MisfirePolicy, OverlapPolicy, RunOutcome, WaitReason
from taskgui.core.status import RunTicket
from tests.core.engine.test_engine_accounting import assert_balanced
from tests.helpers.factories import at, fixed_retry, make_spec
from tests.helpers.schedule_sim import ServiceLoop


def _dispatched(events: list) -> list:  # type: ignore[type-arg]
    return [e.run for e in events if isinstance(e, RunDispatched)]


def _skips(events: list) -> list[tuple[int, object, SkipReason]]:  # type: ignore[type-arg]
    return [(e.count, e.first_at, e.reason) for e in events if isinstance(e, OccurrencesSkipped)]


def test_the_trials_case_the_latest_passed_waits_and_none_is_a_misfire() -> None:
    """Runs of 181 s every 60 s: at 181 the run of 00:01 starts, 00:02 and 00:03 have
    passed; 00:03 waits for it (it came due while runs went on), 00:02 is missed for
    the overlap. (It skipped both, as a misfire.)"""
    spec = make_spec(1, recurrence=Every(timedelta(minutes=1)), overlap=OverlapPolicy.QUEUE)
    engine = Engine()
    engine.add(spec)
    [first] = _dispatched(engine.due(at(0), 1))
    assert _dispatched(engine.due(at(60), 1)) == []  # 00:01 waits for the run of 00:00

    ended = engine.finished(first.run_id, RunOutcome.SUCCEEDED, at(181))
    events = ended + engine.due(at(181), 1) + engine.due(at(181), 1)

    [second] = _dispatched(events)
    assert second.scheduled_at == at(60)
    assert _skips(events) == [(1, at(120), SkipReason.OVERLAP)]
    assert engine.snapshot(1).status.waiting is WaitReason.PREVIOUS_RUN  # 00:03 waits for it
    events = engine.finished(second.run_id, RunOutcome.SUCCEEDED, at(190))
    events += engine.due(at(190), 1)
    assert [run.scheduled_at for run in _dispatched(events)] == [at(180)]


@pytest.mark.parametrize("misfire", list(MisfirePolicy))
@pytest.mark.parametrize("duration", [90.0, 150.0, 181.0, 330.0])
def test_runs_longer_than_the_interval_skip_only_for_the_overlap(
    misfire: MisfirePolicy, duration: float
) -> None:
    spec = make_spec(
        1, recurrence=Every(timedelta(minutes=1)), overlap=OverlapPolicy.QUEUE, misfire=misfire
    )
    loop = ServiceLoop(Engine(), workers=2, rng=random.Random(3), durations=(duration,))
    loop.act(loop.engine.add(spec))

    loop.let_pass(3600)

    reasons = {skip.reason for skip in loop.ledger.skipped.get(1, [])}
    assert SkipReason.MISFIRE not in reasons
    ran = loop.ledger.ran[1]
    # Back to back: one run every `duration` seconds, each the latest occurrence due.
    assert len(ran) >= int(3600 // duration)
    assert ran == sorted(ran) and len(set(ran)) == len(ran)
    loop.drain()
    assert_balanced(loop, [spec])


def test_a_jump_while_an_occurrence_waits_behind_a_run_is_an_overlap() -> None:
    """The wall clock jumps 3 h while an occurrence waits behind a run: as far as the
    scheduler can tell that run went on all the while, so what passed meanwhile came
    due during it: one run stands for it (the latest), the rest is missed for the
    overlap. (Had nothing waited yet, the next occurrence would be found late in the
    time queue: a misfire, as test_engine_accounting's jump tests have it.)"""
    spec = make_spec(1, recurrence=Every(timedelta(minutes=1)), overlap=OverlapPolicy.QUEUE)
    loop = ServiceLoop(Engine(), workers=1, rng=random.Random(4), durations=(90.0,))
    loop.act(loop.engine.add(spec))
    loop.let_pass(200)
    before = len(loop.ledger.ran[1])
    loop.jump(3 * 3600)  # the run in flight keeps its remaining time
    loop.let_pass(100)

    assert len(loop.ledger.ran[1]) - before <= 2
    skips = loop.ledger.skipped[1]
    assert {s.reason for s in skips} == {SkipReason.OVERLAP}
    assert sum(s.count for s in skips) >= 175
    loop.drain()
    assert_balanced(loop, [spec])


# ------------------------------------- a chain kept through other changes (a review)


def _waiting_behind_a_long_run(**rules: object) -> tuple[Engine, RunTicket]:
    """Every minute, queue; the run of 00:00 goes long and 00:01 waits behind it."""
    spec = make_spec(
        1, recurrence=Every(timedelta(minutes=1)), overlap=OverlapPolicy.QUEUE, **rules
    )
    engine = Engine()
    engine.add(spec)
    [first] = _dispatched(engine.due(at(0), 1))
    assert _dispatched(engine.due(at(60), 1)) == []
    assert engine.snapshot(1).status.waiting is WaitReason.PREVIOUS_RUN
    return engine, first


def _reasons(events: list) -> set[SkipReason]:  # type: ignore[type-arg]
    return {reason for _, _, reason in _skips(events)}


def test_a_chained_dispatch_taken_back_waits_again_and_is_no_misfire() -> None:
    """Taken back (a more urgent task, a shutdown): 00:01 was judged late when it came
    back, and with misfire=skip skipped as a misfire with 00:02."""
    engine, first = _waiting_behind_a_long_run(misfire=MisfirePolicy.SKIP)
    events = engine.finished(first.run_id, RunOutcome.SUCCEEDED, at(181))
    [second] = _dispatched(events + engine.due(at(181), 0, queue=1))
    assert second.scheduled_at == at(60)
    events = engine.withdraw(second.run_id) + engine.due(at(182), 1) + engine.due(at(182), 1)
    assert SkipReason.MISFIRE not in _reasons(events)
    assert [run.scheduled_at for run in _dispatched(events)] == [at(60)]


def test_a_retry_during_a_chain_carries_it_on() -> None:
    """The run fails and retries: the occurrence that waited comes back after the retry
    as an overlap (it was skipped as a misfire, with those after it)."""
    engine, first = _waiting_behind_a_long_run(retry=fixed_retry(max_attempts=2, delay=5))
    events = engine.finished(first.run_id, RunOutcome.FAILED, at(181))
    events += engine.due(at(186), 1) + engine.due(at(186), 1)
    assert SkipReason.MISFIRE not in _reasons(events)
    [retry] = _dispatched(events)
    events = engine.finished(retry.run_id, RunOutcome.SUCCEEDED, at(190))
    events += engine.due(at(190), 1)
    assert [run.scheduled_at for run in _dispatched(events)] == [at(180)]  # the latest


def test_an_edit_keeps_the_occurrence_waiting_behind_the_run() -> None:
    """A rename while 00:01 waits: it was put back in the time queue, found late and
    skipped as a misfire with everything after it; nothing ran when the run ended."""
    engine, first = _waiting_behind_a_long_run()
    spec = engine.snapshot(1).spec
    events = engine.update(replace(spec, name="renamed"), at(200)) + engine.due(at(200), 1)
    assert _skips(events) == []
    assert engine.snapshot(1).status.waiting is WaitReason.PREVIOUS_RUN
    events = engine.finished(first.run_id, RunOutcome.SUCCEEDED, at(210))
    events += engine.due(at(210), 1)
    assert [run.scheduled_at for run in _dispatched(events)] == [at(60)]


def test_a_spread_stays_as_drawn_through_a_chain() -> None:
    """Counting on from the spread start added the spread once more at every step."""
    spec = make_spec(
        1,
        recurrence=Every(timedelta(minutes=1)),
        overlap=OverlapPolicy.QUEUE,
        spread=Spread(timedelta(seconds=30), fixed=True),
    )
    loop = ServiceLoop(Engine(), workers=1, rng=random.Random(3), durations=(150.0,))
    loop.act(loop.engine.add(spec))
    loop.let_pass(1800)
    offsets = {round((ran - at(0)).total_seconds() % 60, 6) for ran in loop.ledger.ran[1]}
    assert len(offsets) == 1 and 0 < offsets.pop() < 30  # it drifted: 22, 22, 45, 7, 29...


def test_giving_up_on_conditions_ends_the_wait_behind_the_runs() -> None:
    spec = make_spec(
        1,
        recurrence=Every(timedelta(minutes=10)),
        overlap=OverlapPolicy.QUEUE,
        conditions=RunConditions(ac_power=True, give_up_after=timedelta(minutes=2)),
    )
    engine = Engine()
    engine.conditions_changed(SystemConditions(on_battery=False), at(0))
    engine.add(spec)
    [first] = _dispatched(engine.due(at(0), 1))
    engine.due(at(600), 1)  # 00:10 waits behind the run of 00:00
    engine.conditions_changed(SystemConditions(on_battery=True), at(650))
    engine.finished(first.run_id, RunOutcome.SUCCEEDED, at(700))
    engine.due(at(700), 1)  # then for AC power
    events = engine.due(at(730), 1)  # and gives up: 00:10 missed for its conditions
    assert _reasons(events) == {SkipReason.CONDITION}
    assert engine._back_to_back.waiting_since(1) is None
