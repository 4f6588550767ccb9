"""Behaviour of the scheduling engine, driven with explicit times (no clock, no sleep)."""

from __future__ import annotations

import random
from datetime import datetime, timedelta

import pytest

from taskgui.core.engine.engine import Engine
from taskgui.core.errors import InvalidStateError, InvalidTaskError, TaskNotFoundError
from taskgui.core.events import (
    Event,
    OccurrencesSkipped,
    RetryScheduled,
    RunCancelRequested,
    RunDispatched,
    RunFinished,
    SkipReason,
    TaskChanged,
    TaskExhausted,
    TaskRemoved,
)
from taskgui.core.recurrence import Cron, Every, EveryMode
from taskgui.core.retry import Backoff, RetryPolicy
from taskgui.core.states import (
    MisfirePolicy,
    OverlapPolicy,
    RunOutcome,
    SlotKind,
    TaskState,
    WaitReason,
)
from taskgui.core.status import RunTicket, initial_status
from tests.helpers.factories import T0, at, fixed_retry, make_spec

MINUTE = timedelta(minutes=1)


def dispatched(events: list[Event]) -> list[RunTicket]:
    return [event.run for event in events if isinstance(event, RunDispatched)]


def only_run(events: list[Event]) -> RunTicket:
    runs = dispatched(events)
    assert len(runs) == 1, runs
    return runs[0]


def of_type(events: list[Event], kind: type) -> list:  # type: ignore[type-arg]
    return [event for event in events if isinstance(event, kind)]


# --------------------------------------------------------------- priority


def test_highest_priority_among_due_tasks_runs_first_under_a_backlog() -> None:
    engine = Engine()
    engine.add(make_spec(1, first_run_at=at(0)))
    busy = only_run(engine.due(at(0), free_workers=1))
    # Five tasks become due, in this order, while the only worker is busy.
    for task_id, (due_at, priority) in enumerate(
        [(1, 1), (2, 5), (3, 3), (4, 9), (5, 2)], start=10
    ):
        engine.add(make_spec(task_id, first_run_at=at(due_at), priority=priority))
    assert dispatched(engine.due(at(6), free_workers=0)) == []
    waiting = engine.snapshot(13).status
    assert waiting.state is TaskState.PENDING and waiting.waiting is WaitReason.WORKER

    engine.finished(busy.run_id, RunOutcome.SUCCEEDED, at(7))
    order = []
    for moment in range(8, 13):
        run = only_run(engine.due(at(moment), free_workers=1))
        order.append(run.task_id)
        engine.finished(run.run_id, RunOutcome.SUCCEEDED, at(moment))
    assert order == [13, 11, 12, 14, 10]  # priorities 9, 5, 3, 2, 1


def test_equal_priorities_run_in_due_order_then_fifo() -> None:
    engine = Engine()
    engine.add(make_spec(1, first_run_at=at(5)))
    engine.add(make_spec(2, first_run_at=at(1)))
    engine.add(make_spec(3, first_run_at=at(5)))
    assert [run.task_id for run in dispatched(engine.due(at(10), 3))] == [2, 1, 3]


def test_a_task_not_yet_due_never_runs_early() -> None:
    engine = Engine()
    engine.add(make_spec(1, first_run_at=at(10), priority=100))
    engine.add(make_spec(2, first_run_at=at(0)))
    assert [run.task_id for run in dispatched(engine.due(at(9.999), 5))] == [2]
    assert engine.next_deadline() == at(10)


def test_next_deadline_moves_earlier_when_an_earlier_task_is_added() -> None:
    engine = Engine()
    assert engine.next_deadline() is None
    engine.add(make_spec(1, first_run_at=at(60)))
    assert engine.next_deadline() == at(60)
    engine.add(make_spec(2, first_run_at=at(5)))
    assert engine.next_deadline() == at(5)
    engine.cancel(2)
    assert engine.next_deadline() == at(60)


def test_changing_priority_reorders_a_waiting_task() -> None:
    engine = Engine()
    engine.add(make_spec(1, first_run_at=at(0), priority=1))
    engine.add(make_spec(2, first_run_at=at(0), priority=2))
    engine.due(at(1), free_workers=0)
    engine.update(make_spec(1, first_run_at=at(0), priority=10), at(1))
    assert only_run(engine.due(at(1), 1)).task_id == 1


# ------------------------------------------------------ concurrency keys


def test_concurrency_key_lets_one_run_and_does_not_block_others() -> None:
    engine = Engine()
    engine.add(make_spec(1, concurrency_key="backup", priority=5))
    engine.add(make_spec(2, concurrency_key="backup", priority=4))
    engine.add(make_spec(3, priority=1))
    runs = dispatched(engine.due(at(0), free_workers=3))
    assert [run.task_id for run in runs] == [1, 3]
    status = engine.snapshot(2).status
    assert status.waiting is WaitReason.CONCURRENCY_KEY
    assert status.state is TaskState.PENDING

    engine.finished(runs[0].run_id, RunOutcome.SUCCEEDED, at(5))
    assert engine.snapshot(2).status.waiting is WaitReason.WORKER
    assert only_run(engine.due(at(5), 1)).task_id == 2


def test_cancelling_a_task_blocked_on_its_key_removes_it() -> None:
    engine = Engine()
    engine.add(make_spec(1, concurrency_key="k"))
    engine.add(make_spec(2, concurrency_key="k"))
    run = only_run(engine.due(at(0), 2))
    engine.cancel(2)
    engine.finished(run.run_id, RunOutcome.SUCCEEDED, at(1))
    assert dispatched(engine.due(at(1), 2)) == []
    assert engine.snapshot(2).state is TaskState.CANCELLED


# ----------------------------------------------------------- recurrence


def test_fixed_rate_never_drifts_when_runs_always_finish_late() -> None:
    engine = Engine()
    interval = timedelta(seconds=30)
    engine.add(make_spec(1, first_run_at=at(0), recurrence=Every(interval)))
    rng = random.Random(7)
    now = at(0)
    scheduled = []
    for _ in range(1_000):
        deadline = engine.next_deadline()
        assert deadline is not None
        now = max(now, deadline) + timedelta(seconds=rng.uniform(0.001, 0.5))
        run = only_run(engine.due(now, 1))
        scheduled.append(run.scheduled_at)
        now += timedelta(seconds=rng.uniform(1, 25))  # always finishes late
        engine.finished(run.run_id, RunOutcome.SUCCEEDED, now)
    assert all(s == at(0) + k * interval for k, s in enumerate(scheduled))


def test_fixed_delay_measures_from_the_end_of_the_run() -> None:
    engine = Engine()
    recurrence = Every(MINUTE, EveryMode.FIXED_DELAY)
    engine.add(make_spec(1, first_run_at=at(0), recurrence=recurrence))
    run = only_run(engine.due(at(0), 1))
    assert engine.next_deadline() is None  # nothing queued while it runs
    engine.finished(run.run_id, RunOutcome.SUCCEEDED, at(45))
    assert engine.next_deadline() == at(105)


def test_one_off_task_succeeds_once_and_is_done() -> None:
    engine = Engine()
    engine.add(make_spec(1))
    run = only_run(engine.due(at(0), 1))
    assert engine.snapshot(1).state is TaskState.RUNNING
    engine.started(run.run_id, at(0.01))
    assert engine.snapshot(1).status.running_since == at(0.01)
    events = engine.finished(run.run_id, RunOutcome.SUCCEEDED, at(1))
    assert of_type(events, RunFinished)[0].outcome is RunOutcome.SUCCEEDED
    assert engine.snapshot(1).state is TaskState.SUCCEEDED
    assert engine.next_deadline() is None


# ---------------------------------------------------------------- overlap


def _recurring(task_id: int, overlap: OverlapPolicy):  # type: ignore[no-untyped-def]
    return make_spec(task_id, first_run_at=at(0), recurrence=Every(MINUTE), overlap=overlap)


def test_overlap_skip_drops_occurrences_while_the_previous_run_goes() -> None:
    engine = Engine()
    engine.add(_recurring(1, OverlapPolicy.SKIP))
    first = only_run(engine.due(at(0), 4))
    events = engine.due(at(60), 4)
    assert dispatched(events) == []
    skipped = of_type(events, OccurrencesSkipped)
    assert len(skipped) == 1 and skipped[0].reason is SkipReason.OVERLAP
    assert skipped[0].first_at == at(60)
    assert engine.next_deadline() == at(120)
    engine.finished(first.run_id, RunOutcome.SUCCEEDED, at(90))
    assert only_run(engine.due(at(120), 4)).scheduled_at == at(120)


def test_overlap_queue_runs_the_occurrence_right_after_the_previous_run() -> None:
    engine = Engine()
    engine.add(_recurring(1, OverlapPolicy.QUEUE))
    first = only_run(engine.due(at(0), 4))
    assert dispatched(engine.due(at(60), 4)) == []
    assert engine.snapshot(1).status.waiting is WaitReason.PREVIOUS_RUN
    engine.finished(first.run_id, RunOutcome.SUCCEEDED, at(75))
    second = only_run(engine.due(at(75), 4))
    assert second.scheduled_at == at(60)


def test_overlap_parallel_runs_alongside() -> None:
    engine = Engine()
    engine.add(_recurring(1, OverlapPolicy.PARALLEL))
    first = only_run(engine.due(at(0), 4))
    second = only_run(engine.due(at(60), 4))
    assert (first.scheduled_at, second.scheduled_at) == (at(0), at(60))
    assert engine.snapshot(1).status.running == 2


# ---------------------------------------------------------------- misfire


def _asleep_for_hours(policy: MisfirePolicy, engine: Engine) -> list[Event]:
    engine.add(make_spec(1, first_run_at=at(0), recurrence=Every(MINUTE), misfire=policy))
    run = only_run(engine.due(at(0), 1))
    engine.finished(run.run_id, RunOutcome.SUCCEEDED, at(1))
    # The laptop sleeps for three hours and wakes at 03:00:30 after the first run.
    return engine.due(at(3 * 3600 + 30), free_workers=10)


def test_misfire_run_once_coalesces_into_one_catch_up_run() -> None:
    engine = Engine()
    events = _asleep_for_hours(MisfirePolicy.RUN_ONCE, engine)
    # The catch-up run stands for the latest occurrence that passed (03:00); the 179
    # before it, from 00:01 on, are recorded as missed.
    run = only_run(events)
    assert run.scheduled_at == at(3 * 3600)
    skipped = of_type(events, OccurrencesSkipped)
    assert [(s.count, s.first_at, s.reason) for s in skipped] == [(179, at(60), SkipReason.MISFIRE)]
    assert engine.next_deadline() == at(3 * 3600 + 60)  # back on the grid


def test_misfire_skip_runs_only_the_occurrence_still_inside_its_grace() -> None:
    """Woken at 03:00:30: 00:01 to 02:59 are missed; 03:00 is 30 s late, inside its
    one-minute grace, and runs as it would have alone."""
    engine = Engine()
    events = _asleep_for_hours(MisfirePolicy.SKIP, engine)
    assert [run.scheduled_at for run in dispatched(events)] == [at(3 * 3600)]
    skipped = of_type(events, OccurrencesSkipped)
    assert [(s.count, s.first_at) for s in skipped] == [(179, at(60))]
    assert engine.next_deadline() == at(3 * 3600 + 60)


def test_misfire_skip_runs_nothing_past_its_grace() -> None:
    engine = Engine()
    engine.add(
        make_spec(
            1,
            first_run_at=at(0),
            recurrence=Every(MINUTE),
            misfire=MisfirePolicy.SKIP,
            misfire_grace=timedelta(seconds=10),
        )
    )
    run = only_run(engine.due(at(0), 1))
    engine.finished(run.run_id, RunOutcome.SUCCEEDED, at(1))
    events = engine.due(at(3 * 3600 + 50), free_workers=10)  # grace 10 s: 03:00 is late
    assert dispatched(events) == []
    assert of_type(events, OccurrencesSkipped)[0].count == 180
    assert engine.snapshot(1).status.last_outcome is RunOutcome.MISSED


def test_misfire_run_all_is_bounded() -> None:
    engine = Engine(run_all_limit=5)
    events = _asleep_for_hours(MisfirePolicy.RUN_ALL, engine)
    assert of_type(events, OccurrencesSkipped)[0].count == 175
    scheduled = []
    now = at(3 * 3600 + 30)
    run = only_run(events)
    while True:
        scheduled.append(run.scheduled_at)
        engine.finished(run.run_id, RunOutcome.SUCCEEDED, now)
        runs = dispatched(engine.due(now, 10))
        if not runs:
            break
        run = runs[0]
    assert scheduled == [at(60 * k) for k in range(176, 181)]


def test_a_task_late_within_its_grace_period_just_runs() -> None:
    engine = Engine()
    engine.add(make_spec(1, misfire=MisfirePolicy.SKIP, misfire_grace=timedelta(seconds=30)))
    events = engine.due(at(29), 1)
    assert len(dispatched(events)) == 1 and not of_type(events, OccurrencesSkipped)


def test_a_missed_one_off_task_with_skip_policy_ends_missed() -> None:
    engine = Engine()
    engine.add(make_spec(1, misfire=MisfirePolicy.SKIP))
    events = engine.due(at(3600), 1)
    assert dispatched(events) == []
    assert engine.snapshot(1).state is TaskState.MISSED
    assert engine.next_deadline() is None


def test_backlog_waiting_for_a_worker_is_not_a_misfire() -> None:
    engine = Engine()
    engine.add(make_spec(1, misfire=MisfirePolicy.SKIP))
    engine.due(at(0), free_workers=0)  # due on time, no worker free
    assert only_run(engine.due(at(3600), 1)).task_id == 1


# ---------------------------------------------------------------- retries


def test_retries_with_backoff_until_exhausted() -> None:
    engine = Engine()
    policy = RetryPolicy(
        backoff=Backoff.EXPONENTIAL,
        max_attempts=4,
        base_delay=timedelta(seconds=10),
        max_delay=timedelta(seconds=25),
    )
    engine.add(make_spec(1, retry=policy))
    now = at(0)
    delays = []
    for attempt in range(1, 5):
        run = only_run(engine.due(now, 1))
        assert run.attempt == attempt
        outcome = RunOutcome.TIMED_OUT if attempt == 2 else RunOutcome.FAILED
        events = engine.finished(run.run_id, outcome, now)
        retry = of_type(events, RetryScheduled)
        if attempt < 4:
            assert engine.snapshot(1).state is TaskState.RETRYING
            assert retry[0].attempt == attempt + 1 and retry[0].max_attempts == 4
            delays.append(retry[0].delay)
            assert dispatched(engine.due(retry[0].run_at - timedelta(milliseconds=1), 1)) == []
            now = retry[0].run_at
        else:
            assert retry == []
            exhausted = of_type(events, TaskExhausted)
            assert [(e.task_id, e.attempts) for e in exhausted] == [(1, 4)]
    assert delays == [timedelta(seconds=s) for s in (10, 20, 25)]
    status = engine.snapshot(1).status
    assert status.state is TaskState.EXHAUSTED and status.attempt == 4


def test_a_retry_run_is_scheduled_for_when_it_is_due_not_when_it_was_decided() -> None:
    engine = Engine()
    engine.add(make_spec(1, retry=fixed_retry(max_attempts=3, delay=30)))
    run = only_run(engine.due(at(0), 1))
    [retry] = of_type(engine.finished(run.run_id, RunOutcome.FAILED, at(5)), RetryScheduled)
    assert engine.snapshot(1).status.scheduled_at == retry.run_at == at(35)

    second = only_run(engine.due(at(35), 1))
    assert (second.kind, second.scheduled_at) == (SlotKind.RETRY, at(35))

    engine.finished(second.run_id, RunOutcome.FAILED, at(36))
    engine.retry_now(1, at(40))  # a person brings the third attempt forward: due now
    assert only_run(engine.due(at(40), 1)).scheduled_at == at(40)


def test_a_recurring_task_goes_on_after_exhausting_an_occurrence() -> None:
    engine = Engine()
    engine.add(
        make_spec(
            1,
            recurrence=Every(timedelta(hours=1)),
            retry=fixed_retry(max_attempts=2, delay=60),
        )
    )
    run = only_run(engine.due(at(0), 1))
    engine.finished(run.run_id, RunOutcome.FAILED, at(1))
    # While retrying, the next occurrence is kept aside, not lost.
    assert engine.snapshot(1).status.deferred_at == at(3600)
    retry = only_run(engine.due(at(61), 1))
    assert retry.attempt == 2 and retry.kind is SlotKind.RETRY
    events = engine.finished(retry.run_id, RunOutcome.FAILED, at(62))
    assert len(of_type(events, TaskExhausted)) == 1
    status = engine.snapshot(1).status
    assert status.state is TaskState.PENDING and status.next_run_at == at(3600)
    assert only_run(engine.due(at(3600), 1)).attempt == 1


def test_interrupted_runs_are_retried_at_load() -> None:
    engine = Engine()
    engine.add(make_spec(1, retry=fixed_retry(max_attempts=3, delay=5)))
    only_run(engine.due(at(0), 1))
    stored = list(engine.snapshots())  # as the store saw it when the app died
    assert stored[0].state is TaskState.RUNNING

    revived = Engine()
    events = revived.load(stored, now=at(100))
    retry = of_type(events, RetryScheduled)
    assert [(r.attempt, r.run_at) for r in retry] == [(2, at(105))]
    assert revived.snapshot(1).status.last_outcome is RunOutcome.INTERRUPTED
    assert only_run(revived.due(at(105), 1)).attempt == 2


def test_load_restores_queued_tasks_in_order() -> None:
    engine = Engine()
    for task_id in range(1, 101):
        engine.add(make_spec(task_id, first_run_at=at(1000 - task_id)))
    revived = Engine()
    assert revived.load(list(engine.snapshots()), now=at(0)) == []
    assert revived.next_deadline() == at(900)
    runs = dispatched(revived.due(at(1000), 100))
    assert [run.task_id for run in runs] == list(range(100, 0, -1))


def test_load_rejects_duplicate_ids() -> None:
    engine = Engine()
    engine.add(make_spec(1))
    snapshot = engine.snapshot(1)
    with pytest.raises(InvalidTaskError, match="twice"):
        Engine().load([snapshot, snapshot], now=at(0))


# ------------------------------------------------------- user operations


def test_cancel_a_pending_task() -> None:
    engine = Engine()
    engine.add(make_spec(1, first_run_at=at(10)))
    events = engine.cancel(1)
    assert of_type(events, TaskChanged)[0].task.state is TaskState.CANCELLED
    assert engine.next_deadline() is None
    assert dispatched(engine.due(at(20), 1)) == []
    assert engine.cancel(1) == []  # idempotent


def test_cancel_a_task_waiting_for_its_retry() -> None:
    engine = Engine()
    engine.add(make_spec(1, retry=fixed_retry()))
    run = only_run(engine.due(at(0), 1))
    engine.finished(run.run_id, RunOutcome.FAILED, at(1))
    assert engine.snapshot(1).state is TaskState.RETRYING
    engine.cancel(1)
    assert engine.next_deadline() is None
    assert dispatched(engine.due(at(100), 1)) == []
    assert engine.snapshot(1).state is TaskState.CANCELLED


def test_cancel_a_running_task_asks_to_stop_it_and_never_retries() -> None:
    engine = Engine()
    engine.add(make_spec(1, retry=fixed_retry(), recurrence=Every(MINUTE)))
    run = only_run(engine.due(at(0), 1))
    events = engine.cancel(1)
    assert [event.run for event in of_type(events, RunCancelRequested)] == [run]
    events = engine.finished(run.run_id, RunOutcome.CANCELLED, at(2))
    assert of_type(events, RetryScheduled) == []
    assert engine.snapshot(1).state is TaskState.CANCELLED
    assert engine.next_deadline() is None


def test_cancel_a_finished_task_is_refused() -> None:
    engine = Engine()
    engine.add(make_spec(1))
    run = only_run(engine.due(at(0), 1))
    engine.finished(run.run_id, RunOutcome.SUCCEEDED, at(1))
    with pytest.raises(InvalidStateError, match="has succeeded; nothing to cancel"):
        engine.cancel(1)


def test_pause_and_resume() -> None:
    engine = Engine()
    engine.add(make_spec(1, first_run_at=at(10)))
    engine.pause(1)
    assert engine.snapshot(1).state is TaskState.PAUSED
    assert dispatched(engine.due(at(20), 1)) == []
    engine.resume(1)
    assert engine.snapshot(1).state is TaskState.PENDING
    assert only_run(engine.due(at(21), 1)).task_id == 1


@pytest.mark.parametrize(
    ("policy", "ran", "missed"),
    [
        (MisfirePolicy.RUN_ONCE, [at(3 * 3600)], [(17, at(600))]),
        (MisfirePolicy.SKIP, [at(3 * 3600)], [(17, at(600))]),  # 03:00 is 30 s late
        (MisfirePolicy.RUN_ALL, [at(600 * k) for k in range(1, 19)], []),
    ],
)
def test_resume_meets_the_misfire_policy_for_what_passed_while_paused(
    policy: MisfirePolicy, ran: list[datetime], missed: list[tuple[int, datetime]]
) -> None:
    engine = Engine()
    engine.add(make_spec(1, recurrence=Every(timedelta(minutes=10)), misfire=policy))
    run = only_run(engine.due(at(0), 1))
    engine.finished(run.run_id, RunOutcome.SUCCEEDED, at(1))
    engine.pause(1)
    assert dispatched(engine.due(at(3 * 3600), 1)) == []  # three hours paused

    events = engine.resume(1)
    now = at(3 * 3600 + 30)
    for _ in range(100):  # as the service does: dispatch, finish, dispatch again
        step = engine.due(now, 1)
        events += step
        if not dispatched(step):
            break
        for run in dispatched(step):
            engine.finished(run.run_id, RunOutcome.SUCCEEDED, now)

    assert [r.scheduled_at for r in dispatched(events)] == ran
    skips = of_type(events, OccurrencesSkipped)
    assert [(s.count, s.first_at) for s in skips] == missed
    assert all(s.reason is SkipReason.MISFIRE for s in skips)
    assert engine.next_deadline() == at(3 * 3600 + 600)


def test_a_run_taskgui_stopped_spends_no_attempt() -> None:
    """A quit, a daemon or a node stopped mid-run (the service reports INTERRUPTED): the
    same attempt comes due again, for a one-attempt task too, not "exhausted"."""
    engine = Engine()
    engine.add(make_spec(1, first_run_at=at(0), retry=fixed_retry(max_attempts=1)))
    run = only_run(engine.due(at(0), 1))
    events = engine.finished(run.run_id, RunOutcome.INTERRUPTED, at(5))
    assert not [e for e in events if isinstance(e, TaskExhausted)]
    assert engine.snapshot(1).state is TaskState.RETRYING  # due now: at the next start
    again = only_run(engine.due(at(3600), 1))  # an hour later: a retry, no misfire
    assert (again.attempt, again.kind, again.scheduled_at) == (1, SlotKind.RETRY, at(5))
    engine.finished(again.run_id, RunOutcome.SUCCEEDED, at(61))
    assert engine.snapshot(1).state is TaskState.SUCCEEDED


def test_a_recurring_run_taskgui_stopped_is_retried_then_the_schedule_goes_on() -> None:
    """Under misfire skip too: the stopped attempt is retried, not a late occurrence,
    and the next occurrence comes back after it, where it was."""
    engine = Engine()
    spec = make_spec(
        1, first_run_at=at(0), recurrence=Every(timedelta(hours=1)), misfire=MisfirePolicy.SKIP
    )
    engine.add(spec)
    run = only_run(engine.due(at(0), 1))
    engine.finished(run.run_id, RunOutcome.INTERRUPTED, at(30))
    again = only_run(engine.due(at(1800), 1))  # the next start, half an hour later
    assert (again.kind, again.attempt) == (SlotKind.RETRY, 1)
    engine.finished(again.run_id, RunOutcome.SUCCEEDED, at(1801))
    assert engine.next_deadline() == at(3600)


def test_a_crash_still_spends_the_attempt_it_interrupted() -> None:
    """Found at the next start (Engine.load): a command that kills taskgui would else
    run at every start for ever; its retries are its retry policy's."""
    offline = Engine()
    offline.add(make_spec(1, first_run_at=at(0), retry=fixed_retry(max_attempts=1)))
    only_run(offline.due(at(0), 1))  # running when the process died
    engine = Engine()
    events = engine.load(list(offline.snapshots()), at(60))
    assert [e for e in events if isinstance(e, TaskExhausted)]
    assert engine.snapshot(1).state is TaskState.EXHAUSTED


def test_run_now_runs_a_future_task_and_keeps_its_schedule() -> None:
    engine = Engine()
    engine.add(make_spec(1, first_run_at=at(3600), recurrence=Every(timedelta(hours=1))))
    engine.run_now(1, at(5))
    run = only_run(engine.due(at(5), 1))
    assert run.kind is SlotKind.MANUAL
    assert engine.next_deadline() == at(3600)  # the schedule is untouched
    engine.finished(run.run_id, RunOutcome.SUCCEEDED, at(6))
    assert only_run(engine.due(at(3600), 1)).scheduled_at == at(3600)


def test_run_now_asked_before_a_scheduler_starts_is_the_due_one_off_run() -> None:
    """The trial's case: ``taskgui add`` (due now) and ``run-now`` with no scheduler, a
    daemon 4 s later. One run, the task done, and no "missed" record beside it."""
    offline = Engine()  # the CLI's, with no scheduler running
    offline.add(make_spec(1, first_run_at=at(0)))
    offline.run_now(1, at(1))
    engine = Engine()  # the daemon's, from what the CLI stored
    events = engine.load(list(offline.snapshots()), at(4)) + engine.due(at(4), 4)
    run = only_run(events)
    assert (run.kind, run.scheduled_at) == (SlotKind.OCCURRENCE, at(0))  # it runs as that
    events = engine.finished(run.run_id, RunOutcome.SUCCEEDED, at(5)) + engine.due(at(5), 4)
    assert not [e for e in events if isinstance(e, OccurrencesSkipped)]
    assert engine.snapshot(1).state is TaskState.SUCCEEDED
    assert engine.next_deadline() is None


def test_run_now_on_a_recurring_task_whose_run_waits_is_that_run() -> None:
    """Due at 00:00 but every worker busy: "run now" at 00:10 runs the 00:00 occurrence,
    and the schedule goes on from it (01:00), with nothing missed."""
    engine = Engine()
    engine.add(make_spec(1, first_run_at=at(0), recurrence=Every(timedelta(hours=1))))
    assert dispatched(engine.due(at(0), 0)) == []  # no worker free
    engine.run_now(1, at(600))
    run = only_run(engine.due(at(600), 1))
    assert (run.kind, run.scheduled_at) == (SlotKind.OCCURRENCE, at(0))
    events = engine.finished(run.run_id, RunOutcome.SUCCEEDED, at(601))
    assert not [e for e in events + engine.due(at(601), 1) if isinstance(e, OccurrencesSkipped)]
    assert engine.next_deadline() == at(3600)


def test_run_now_past_the_grace_is_a_run_of_its_own_and_the_occurrence_was_missed() -> None:
    """Two hours down: the 00:00 occurrence is past its grace (1 minute) and missed,
    as its misfire policy says, whatever a person runs at 02:00:10."""
    engine = Engine()
    spec = make_spec(
        1, first_run_at=at(0), recurrence=Every(timedelta(hours=1)), misfire=MisfirePolicy.SKIP
    )
    engine.add(spec)
    engine.run_now(1, at(7210))
    events = engine.due(at(7210), 2)
    assert only_run(events).kind is SlotKind.MANUAL
    events += engine.due(at(7210), 2)  # the occurrence it deferred comes back: missed
    skipped = [e for e in events if isinstance(e, OccurrencesSkipped)]
    # 00:00 and 01:00 past their grace; 02:00 comes due while the manual run runs.
    assert [(s.count, s.first_at) for s in skipped] == [(2, at(0)), (1, at(7200))]


def test_run_now_past_the_grace_under_run_once_is_the_one_catch_up() -> None:
    """Two hours down under run_once: the policy runs one catch-up for the backlog,
    standing for 02:00 (the latest that passed), 00:00 and 01:00 missed. A person's run
    now at 02:00:10 is that catch-up: one run, as the 02:00 occurrence, and the schedule
    goes on at 03:00. (A trial found a manual run and the 02:00 recorded missed beside
    it, "taskgui was not running", where the policy would have run it.)"""
    engine = Engine()
    spec = make_spec(
        1, first_run_at=at(0), recurrence=Every(timedelta(hours=1)), misfire=MisfirePolicy.RUN_ONCE
    )
    engine.add(spec)
    events = engine.run_now(1, at(7210))
    events += engine.due(at(7210), 2)
    run = only_run(events)
    assert (run.kind, run.scheduled_at) == (SlotKind.OCCURRENCE, at(7200))
    events += engine.finished(run.run_id, RunOutcome.SUCCEEDED, at(7211))
    events += engine.due(at(7211), 2)
    assert len(dispatched(events)) == 1
    skipped = [e for e in events if isinstance(e, OccurrencesSkipped)]
    assert [(s.count, s.first_at, s.reason) for s in skipped] == [(2, at(0), SkipReason.MISFIRE)]
    assert engine.next_deadline() == at(3 * 3600)


@pytest.mark.parametrize("late", [10, 7210])  # inside its grace; past it, under run_once
def test_run_now_twice_before_it_runs_is_still_one_run_of_that_occurrence(late: int) -> None:
    """A double click, or ``run-now`` twice before a daemon dispatches: the second ask
    keeps what the first one stood for (it made the occurrence run twice: once by hand,
    then again as itself)."""
    engine = Engine()
    spec = make_spec(
        1, first_run_at=at(0), recurrence=Every(timedelta(hours=1)), misfire=MisfirePolicy.RUN_ONCE
    )
    engine.add(spec)
    events = engine.run_now(1, at(late)) + engine.run_now(1, at(late + 0.5))
    events += engine.due(at(late + 1), 2)
    run = only_run(events)
    assert run.kind is SlotKind.OCCURRENCE
    events += engine.finished(run.run_id, RunOutcome.SUCCEEDED, at(late + 2))
    events += engine.due(at(late + 2), 2)
    assert len(dispatched(events)) == 1
    skipped = [e for e in events if isinstance(e, OccurrencesSkipped)]
    assert sum(s.count for s in skipped) == (2 if late > 3600 else 0)


def test_run_now_from_the_cli_past_the_grace_under_run_once_then_a_daemon() -> None:
    """The trial's case end to end: a task due at 00:00 with no scheduler, ``run-now``
    from the CLI at 02:00:10, a daemon started at 02:00:20 from what the CLI stored."""
    offline = Engine()
    spec = make_spec(
        1, first_run_at=at(0), recurrence=Every(timedelta(hours=1)), misfire=MisfirePolicy.RUN_ONCE
    )
    offline.add(spec)
    recorded = offline.run_now(1, at(7210))  # the CLI commits these
    engine = Engine()
    events = engine.load(list(offline.snapshots()), at(7220)) + engine.due(at(7220), 4)
    run = only_run(events)
    assert (run.kind, run.scheduled_at) == (SlotKind.OCCURRENCE, at(7200))
    events += engine.finished(run.run_id, RunOutcome.SUCCEEDED, at(7221))
    events += engine.due(at(7221), 4)
    skipped = [e for e in recorded + events if isinstance(e, OccurrencesSkipped)]
    assert [(s.count, s.first_at) for s in skipped] == [(2, at(0))]  # once, by the CLI
    assert len(dispatched(events)) == 1
    assert engine.next_deadline() == at(3 * 3600)


def test_run_now_on_a_paused_task_leaves_its_due_occurrence_to_the_resume() -> None:
    engine = Engine()
    engine.add(make_spec(1, first_run_at=at(0), recurrence=Every(timedelta(hours=1))))
    engine.pause(1)
    engine.run_now(1, at(10))
    assert only_run(engine.due(at(10), 1)).kind is SlotKind.MANUAL


def test_run_now_on_a_fixed_delay_task_whose_run_waits_is_that_run() -> None:
    engine = Engine()
    every = Every(timedelta(minutes=5), mode=EveryMode.FIXED_DELAY)
    engine.add(make_spec(1, first_run_at=at(0), recurrence=every))
    assert dispatched(engine.due(at(0), 0)) == []  # no worker free
    engine.run_now(1, at(20))
    run = only_run(engine.due(at(20), 1))
    assert (run.kind, run.scheduled_at) == (SlotKind.OCCURRENCE, at(0))
    events = engine.finished(run.run_id, RunOutcome.SUCCEEDED, at(30)) + engine.due(at(30), 1)
    assert not [e for e in events if isinstance(e, OccurrencesSkipped)]
    assert engine.next_deadline() == at(330)  # five minutes after the run ended


def test_run_now_on_a_paused_task_runs_once_and_stays_paused() -> None:
    engine = Engine()
    engine.add(make_spec(1, first_run_at=at(3600), recurrence=Every(timedelta(hours=1))))
    engine.pause(1)
    engine.run_now(1, at(5))
    run = only_run(engine.due(at(5), 1))
    engine.finished(run.run_id, RunOutcome.SUCCEEDED, at(6))
    assert engine.snapshot(1).state is TaskState.PAUSED
    assert dispatched(engine.due(at(7200), 1)) == []


def test_a_run_asked_for_while_paused_survives_resume_while_it_waits_for_a_worker() -> None:
    engine = Engine()
    engine.add(make_spec(1, first_run_at=at(3600), recurrence=Every(timedelta(hours=1))))
    engine.pause(1)
    engine.run_now(1, at(5))
    assert dispatched(engine.due(at(5), 0)) == []  # waits for a worker
    engine.resume(1)  # must not queue it a second time

    run = only_run(engine.due(at(6), 1))

    assert run.kind is SlotKind.MANUAL
    assert engine.next_deadline() == at(3600)


def test_pausing_keeps_a_run_a_person_asked_for() -> None:
    engine = Engine()
    engine.add(make_spec(1, first_run_at=at(3600), recurrence=Every(timedelta(hours=1))))
    engine.run_now(1, at(5))
    engine.pause(1)

    assert engine.snapshot(1).state is TaskState.PENDING  # the run asked for is still due
    assert only_run(engine.due(at(5), 1)).kind is SlotKind.MANUAL


def test_run_now_twice_while_running_is_refused() -> None:
    engine = Engine()
    engine.add(make_spec(1))
    only_run(engine.due(at(0), 1))
    with pytest.raises(InvalidStateError, match="already running"):
        engine.run_now(1, at(1))


def test_retry_now_starts_over_an_exhausted_task() -> None:
    engine = Engine()
    engine.add(make_spec(1))
    run = only_run(engine.due(at(0), 1))
    engine.finished(run.run_id, RunOutcome.FAILED, at(1))
    assert engine.snapshot(1).state is TaskState.EXHAUSTED
    engine.retry_now(1, at(50))
    assert engine.snapshot(1).state is TaskState.PENDING
    again = only_run(engine.due(at(50), 1))
    assert again.attempt == 1
    engine.finished(again.run_id, RunOutcome.SUCCEEDED, at(51))
    assert engine.snapshot(1).state is TaskState.SUCCEEDED


def test_retry_now_brings_a_waiting_retry_forward() -> None:
    engine = Engine()
    engine.add(make_spec(1, retry=fixed_retry(delay=600)))
    run = only_run(engine.due(at(0), 1))
    engine.finished(run.run_id, RunOutcome.FAILED, at(1))
    engine.retry_now(1, at(2))
    assert only_run(engine.due(at(2), 1)).attempt == 2


def test_retry_now_on_a_healthy_task_is_refused() -> None:
    engine = Engine()
    engine.add(make_spec(1, first_run_at=at(100)))
    with pytest.raises(InvalidStateError, match="has not failed"):
        engine.retry_now(1, at(0))


def test_reschedule_moves_the_next_run() -> None:
    engine = Engine()
    engine.add(make_spec(1, first_run_at=at(100)))
    engine.reschedule(1, at(10))
    assert engine.next_deadline() == at(10)
    assert only_run(engine.due(at(10), 1)).scheduled_at == at(10)


def test_update_with_a_new_time_rearms_a_finished_one_off() -> None:
    engine = Engine()
    engine.add(make_spec(1))
    run = only_run(engine.due(at(0), 1))
    engine.finished(run.run_id, RunOutcome.SUCCEEDED, at(1))
    engine.update(make_spec(1, first_run_at=at(500)), now=at(2))
    assert engine.snapshot(1).state is TaskState.PENDING
    assert engine.next_deadline() == at(500)


def test_update_of_a_recurring_schedule_starts_from_the_next_future_occurrence() -> None:
    engine = Engine()
    engine.add(make_spec(1, recurrence=Every(MINUTE)))
    engine.update(make_spec(1, recurrence=Every(timedelta(hours=1))), now=at(90))
    assert engine.next_deadline() == at(3600)


def test_remove_forgets_a_task_and_stops_its_run() -> None:
    engine = Engine()
    engine.add(make_spec(1))
    run = only_run(engine.due(at(0), 1))
    events = engine.remove(1)
    assert of_type(events, RunCancelRequested)[0].run == run
    assert of_type(events, TaskRemoved) == [TaskRemoved(1)]
    assert 1 not in engine
    assert of_type(engine.finished(run.run_id, RunOutcome.CANCELLED, at(1)), RunFinished)


def test_unknown_ids_and_duplicates_are_clear_errors() -> None:
    engine = Engine()
    with pytest.raises(TaskNotFoundError, match="no task with id 7"):
        engine.cancel(7)
    engine.add(make_spec(1))
    with pytest.raises(InvalidTaskError, match="already exists"):
        engine.add(make_spec(1))
    with pytest.raises(InvalidTaskError, match="needs an id"):
        engine.add(make_spec(0))
    assert engine.finished(999, RunOutcome.SUCCEEDED, T0) == []


def test_a_new_task_has_the_initial_status_a_repository_stores_for_it() -> None:
    engine = Engine()
    for spec in (make_spec(1, first_run_at=at(30)), make_spec(2, paused=True)):
        engine.add(spec)
        assert engine.snapshot(spec.id).status == initial_status(spec)


def test_a_cron_task_first_runs_at_its_first_match_not_at_its_start_time() -> None:
    engine = Engine()
    spec = make_spec(1, first_run_at=at(0), recurrence=Cron("30 14 * * *", "UTC"))
    engine.add(spec)
    assert engine.next_deadline() == T0.replace(hour=14, minute=30)
    assert engine.snapshot(1).status == initial_status(spec)


def test_a_run_started_after_its_task_was_removed_changes_nothing() -> None:
    """Removal keeps the task's runs registered until they finish (the store closes
    their rows then); a start reported in between is ignored, not a KeyError."""
    engine = Engine()
    engine.add(make_spec(1))
    run = only_run(engine.due(T0, free_workers=1))
    engine.remove(1)

    assert engine.started(run.run_id, at(1)) == []
    assert run.run_id in engine.running_runs
    assert of_type(engine.finished(run.run_id, RunOutcome.CANCELLED, at(2)), RunFinished)
    assert engine.running_runs == {}


def test_a_recurring_task_interrupted_for_good_keeps_its_cadence() -> None:
    """Stored as running, no attempts left: the run is over, the next one still comes."""
    engine = Engine()
    engine.add(make_spec(1, first_run_at=at(0), recurrence=Every(timedelta(seconds=10))))
    engine.due(at(0), 1)
    stored = engine.snapshot(1)  # as a crash left it: running, next occurrence at 10

    revived = Engine()
    revived.load([stored], at(5))

    assert revived.next_deadline() == at(10)
    assert [run.scheduled_at for run in dispatched(revived.due(at(10), 1))] == [at(10)]


def test_a_task_waiting_for_a_key_is_told_when_it_waits_for_a_worker_instead() -> None:
    engine = Engine()
    engine.add(make_spec(1, first_run_at=at(0), concurrency_key="db"))
    engine.add(make_spec(2, first_run_at=at(0), concurrency_key="db"))
    engine.add(make_spec(3, first_run_at=at(0)))
    runs = {run.task_id: run for run in dispatched(engine.due(at(0), 2))}
    assert set(runs) == {1, 3}  # task 2 parked on the key
    first = runs[1]
    assert engine.snapshot(2).status.waiting is WaitReason.CONCURRENCY_KEY

    events = engine.finished(first.run_id, RunOutcome.SUCCEEDED, at(1))

    changed = [e.task for e in events if isinstance(e, TaskChanged) and e.task.id == 2]
    assert [task.status.waiting for task in changed] == [WaitReason.WORKER]


def test_a_task_that_waited_for_a_worker_is_told_when_it_finds_its_key_taken() -> None:
    engine = Engine()
    engine.add(make_spec(1, first_run_at=at(0)))
    engine.add(make_spec(2, first_run_at=at(0), concurrency_key="db", priority=-1))
    engine.add(make_spec(3, first_run_at=at(5), concurrency_key="db", priority=5))
    first = only_run(engine.due(at(0), 1))  # task 1 takes the only worker
    assert first.task_id == 1
    assert engine.snapshot(2).status.waiting is WaitReason.WORKER
    engine.finished(first.run_id, RunOutcome.SUCCEEDED, at(4))
    # Task 3 is more urgent and takes the key; task 2 then finds it taken.
    events = engine.due(at(5), 2)

    assert only_run(events).task_id == 3
    changed = [e.task for e in events if isinstance(e, TaskChanged) and e.task.id == 2]
    assert [task.status.waiting for task in changed] == [WaitReason.CONCURRENCY_KEY]


def test_the_next_task_on_a_free_key_takes_over_when_the_first_in_line_leaves() -> None:
    engine = Engine()
    for task_id in (1, 2, 3):
        engine.add(make_spec(task_id, first_run_at=at(0), concurrency_key="db"))
    run = only_run(engine.due(at(0), 3))
    assert engine.snapshot(3).status.waiting is WaitReason.CONCURRENCY_KEY
    engine.finished(run.run_id, RunOutcome.SUCCEEDED, at(1))  # task 2 is first in line
    assert engine.snapshot(2).status.waiting is WaitReason.WORKER

    events = engine.pause(2)  # it leaves the line before it got a worker

    changed = [e.task for e in events if isinstance(e, TaskChanged) and e.task.id == 3]
    assert [task.status.waiting for task in changed] == [WaitReason.WORKER]
    assert only_run(engine.due(at(2), 1)).task_id == 3  # not stuck on a key nobody holds


def test_a_parallel_task_says_its_next_run_waits_for_a_worker() -> None:
    engine = Engine()
    engine.add(_recurring(1, OverlapPolicy.PARALLEL))
    only_run(engine.due(at(0), 1))

    events = engine.due(at(60), 0)

    [changed] = [e.task for e in events if isinstance(e, TaskChanged)]
    assert changed.status.waiting is WaitReason.WORKER and changed.status.running == 1
