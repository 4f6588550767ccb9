"""Every occurrence that passed either ran or is recorded as missed, under any policy.

The engine runs inside ``ServiceLoop`` (the service's wake / due / commit loop on a
FakeClock) through hours of schedule: time passing, wall-clock jumps, sleep, downtime
with a restart, pauses, manual runs, failures and retries, runs that outlast their
interval, too few workers. One task per misfire x overlap policy shares the workers.
Afterwards, for each task, the occurrence times that ran plus those the "missed"
records stand for must be exactly the occurrences due up to now: none twice, none lost.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta

import pytest
from hypothesis import HealthCheck, given, settings

from taskgui.core.engine.engine import Engine
from taskgui.core.events import Event, OccurrencesSkipped, RunDispatched, SkipReason
from taskgui.core.recurrence import Every
from taskgui.core.states import MisfirePolicy, OverlapPolicy, RunOutcome
from taskgui.core.task import TaskSpec
from tests.helpers.factories import T0, at, make_spec
from tests.helpers.schedule_sim import ServiceLoop, occurrences_until
from tests.helpers.schedule_strategies import Load, actions, loads, perform, schedules

RUN_ALL_LIMIT = 6
HOUR = 3600.0


def reloaded(
    engine: Engine, now: datetime, run_all_limit: int = RUN_ALL_LIMIT
) -> tuple[Engine, list[Event]]:
    """A restart: a new engine from what the old one would have left in the store."""
    stored = list(engine.snapshots())
    revived = Engine(run_all_limit=run_all_limit)
    return revived, revived.load(stored, now)


def assert_balanced(loop: ServiceLoop, specs: list[TaskSpec]) -> None:
    for spec in specs:
        due = occurrences_until(spec, loop.now)
        accounted = loop.ledger.accounted(spec)
        assert accounted == due, (
            f"task {spec.id} ({spec.misfire}, {spec.overlap}, {spec.recurrence}): "
            f"{len(due)} occurrences due, {len(loop.ledger.ran.get(spec.id, []))} ran, "
            f"{loop.ledger.missed_count(spec.id)} recorded missed"
        )


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(specs=schedules(), steps=actions, load=loads)
def test_every_occurrence_due_ran_or_is_recorded_missed(
    specs: list[TaskSpec], steps: list[tuple[str, float]], load: Load
) -> None:
    engine = Engine(run_all_limit=RUN_ALL_LIMIT)
    loop = ServiceLoop(
        engine,
        restart=lambda now: reloaded(loop.engine, now),
        **load.loop_options(),
    )
    for spec in specs:
        loop.act(engine.add(spec))
    for step in steps:
        perform(loop, specs, step)
    loop.drain()
    assert_balanced(loop, specs)


# ------------------------------------------------ the reported cases, by hand


def _catch_up(misfire: MisfirePolicy, overlap: OverlapPolicy, *, run_all_limit: int = 100):  # type: ignore[no-untyped-def]
    """Every 10 minutes from T0; each run takes 2 minutes; the wall clock jumps 3 h."""
    spec = make_spec(1, recurrence=Every(timedelta(minutes=10)), misfire=misfire, overlap=overlap)
    loop = ServiceLoop(
        Engine(run_all_limit=run_all_limit),
        workers=4,
        rng=random.Random(1),
        durations=(120.0,),
    )
    loop.act(loop.engine.add(spec))
    return spec, loop


@pytest.mark.parametrize("overlap", list(OverlapPolicy))
def test_run_all_after_a_3_hour_jump_runs_every_missed_occurrence(
    overlap: OverlapPolicy,
) -> None:
    spec, loop = _catch_up(MisfirePolicy.RUN_ALL, overlap)
    loop.let_pass(1)  # the run at T0 has started
    loop.jump(3 * HOUR)
    loop.let_pass(19 * 120 + 1)  # long enough for the whole backlog, one after another

    ran = loop.ledger.ran[1]
    # T0 and the 18 occurrences the jump passed over (00:10 ... 03:00), then those that
    # came due while the backlog ran: every one ran, in order, and none was skipped.
    assert ran[:19] == [T0 + timedelta(minutes=10 * k) for k in range(19)]
    assert ran == sorted(ran) and len(set(ran)) == len(ran)
    assert loop.ledger.skipped.get(1, []) == []
    loop.drain()
    assert_balanced(loop, [spec])


def test_run_all_beyond_its_bound_records_the_rest_as_missed() -> None:
    spec, loop = _catch_up(MisfirePolicy.RUN_ALL, OverlapPolicy.SKIP, run_all_limit=5)
    loop.let_pass(121)
    loop.jump(3 * HOUR)
    loop.let_pass(5 * 120 + 1)

    skip = loop.ledger.skipped[1][0]
    assert (skip.count, skip.first_at, skip.reason) == (13, at(600), SkipReason.MISFIRE)
    assert loop.ledger.ran[1][1:6] == [T0 + timedelta(minutes=10 * k) for k in range(14, 19)]
    loop.drain()
    assert_balanced(loop, [spec])


def test_overlap_skip_counts_every_occurrence_it_jumps_over() -> None:
    # A run that hangs; the machine sleeps 4.5 minutes, within the task's grace period
    # of 10 (so not a misfire): the skip must say how many occurrences it passed over.
    spec = make_spec(
        1,
        recurrence=Every(timedelta(minutes=1)),
        overlap=OverlapPolicy.SKIP,
        misfire_grace=timedelta(minutes=10),
    )
    engine = Engine()
    engine.add(spec)
    [run] = [e.run for e in engine.due(at(0), 1) if isinstance(e, RunDispatched)]

    events = engine.due(at(270), 1)

    skipped = [e for e in events if isinstance(e, OccurrencesSkipped)]
    assert [(s.count, s.first_at, s.exact, s.reason) for s in skipped] == [
        (4, at(60), True, SkipReason.OVERLAP)
    ]
    assert engine.next_deadline() == at(300)
    assert engine.finished(run.run_id, RunOutcome.SUCCEEDED, at(280))


def test_61_minutes_of_downtime_with_run_all_runs_all_seven() -> None:
    spec = make_spec(
        1,
        recurrence=Every(timedelta(minutes=10)),
        misfire=MisfirePolicy.RUN_ALL,
        first_run_at=at(600),
    )
    loop = ServiceLoop(
        Engine(),
        workers=2,
        rng=random.Random(2),
        durations=(20.0,),
        restart=lambda now: reloaded(loop.engine, now, run_all_limit=100),
    )
    loop.act(loop.engine.add(spec))
    loop.let_pass(1)
    loop.downtime(61 * 60 + 540)  # down from 00:00:01 until 01:10:01

    loop.let_pass(7 * 20 + 1)

    assert loop.ledger.ran[1][:7] == [at(600 * k) for k in range(1, 8)]
    assert 1 not in loop.ledger.skipped
    loop.drain()
    assert_balanced(loop, [spec])


# ------------------------------------- a backlog inside the grace period (outside trial)


def test_a_backlog_inside_the_grace_period_is_missed_for_downtime_not_overlap() -> None:
    """Every second; taskgui was down 4 s. Nothing was running: the reason must say so."""
    spec = make_spec(1, recurrence=Every(timedelta(seconds=1)), overlap=OverlapPolicy.SKIP)
    engine = Engine()
    engine.add(spec)

    # The service calls due again at once: the next slot (00:01) is in the past too.
    events = engine.due(at(4), 4) + engine.due(at(4), 4)

    [dispatched] = [e.run for e in events if isinstance(e, RunDispatched)]
    assert dispatched.scheduled_at == T0
    skipped = [e for e in events if isinstance(e, OccurrencesSkipped)]
    assert [(s.count, s.first_at, s.reason) for s in skipped] == [(4, at(1), SkipReason.MISFIRE)]
    assert engine.next_deadline() == at(5)


@pytest.mark.parametrize("downtime", [100, 66])
def test_run_all_with_overlap_skip_runs_the_whole_backlog_inside_the_grace_too(
    downtime: int,
) -> None:
    """The README: "with --overlap skip they still all run, one at a time"."""
    spec = make_spec(
        1,
        recurrence=Every(timedelta(seconds=10)),
        misfire=MisfirePolicy.RUN_ALL,
        overlap=OverlapPolicy.SKIP,
        first_run_at=at(10),
    )
    loop = ServiceLoop(
        Engine(),
        workers=2,
        rng=random.Random(3),
        durations=(0.01,),
        restart=lambda now: reloaded(loop.engine, now, run_all_limit=100),
    )
    loop.act(loop.engine.add(spec))
    loop.let_pass(1)
    loop.downtime(downtime)

    loop.let_pass(5)

    due = occurrences_until(spec, at(1 + downtime))
    assert loop.ledger.ran[1][: len(due)] == due
    assert 1 not in loop.ledger.skipped
    loop.drain()
    assert_balanced(loop, [spec])
