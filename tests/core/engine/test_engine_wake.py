"""A calm wake-up in the engine: 8 hours asleep, 14 runs due at once, three policies."""

from __future__ import annotations

from dataclasses import replace
from datetime import timedelta

from taskgui.core.engine.engine import Engine
from taskgui.core.events import OccurrencesSkipped, RunDispatched, SkipReason, TaskChanged
from taskgui.core.recurrence import Every
from taskgui.core.states import MisfirePolicy, RunOutcome, TaskState, WaitReason
from taskgui.core.status import TaskSnapshot
from taskgui.core.wake import CALM_FROM, WakeAnswer, WakeKind, WakePolicy, parse_wake_policy
from tests.helpers.factories import T0, make_spec

HOUR = timedelta(hours=1)
TEN = timedelta(minutes=10)
SPREAD = WakePolicy(kind=WakeKind.SPREAD, spread=TEN)
ASK = WakePolicy(kind=WakeKind.ASK, spread=TEN)
NOW = WakePolicy(kind=WakeKind.NOW)
WOKE = T0 + 8 * HOUR


def _fourteen(engine: Engine, **overrides: object) -> None:
    """14 hourly tasks, each first due during the night; priorities 0..3 in turn."""
    for task_id in range(1, 15):
        engine.add(
            make_spec(
                task_id,
                first_run_at=T0 + timedelta(minutes=10 * task_id),
                recurrence=Every(HOUR),
                priority=task_id % 4,
                **overrides,
            )
        )


def _starts(engine: Engine) -> dict[int, timedelta]:
    return {s.spec.id: s.status.next_run_at - WOKE for s in engine.snapshots()}  # type: ignore[operator]


def test_spread_starts_the_catch_ups_over_ten_minutes_in_priority_order() -> None:
    engine = Engine()
    _fourteen(engine)
    events, question = engine.calm_wake(WOKE, SPREAD, can_ask=True)
    assert question is None
    # The misfire policy (run_once) decided first: 7 or 8 missed occurrences each.
    assert sum(isinstance(e, OccurrencesSkipped) for e in events) == 14
    starts = _starts(engine)
    order = sorted(starts, key=lambda task_id: starts[task_id])
    # Priority 3 first; within one, the occurrence each stands for (the latest that
    # passed: 7 at 07:10, 3 at 07:30, 11 at 07:50 after 12:00), then the id.
    assert order == [7, 3, 11, 2, 14, 10, 6, 1, 13, 9, 5, 8, 4, 12]
    assert sorted(starts.values()) == [TEN * i / 14 for i in range(14)]
    # Each start is committed with its task (TaskChanged), its occurrence kept.
    changed = {e.task.spec.id: e.task for e in events if isinstance(e, TaskChanged)}
    assert set(changed) == set(range(1, 15))
    dispatched = [e for e in engine.due(WOKE, 20) if isinstance(e, RunDispatched)]
    assert [d.run.task_id for d in dispatched] == [7]
    later = [e for e in engine.due(WOKE + TEN, 20) if isinstance(e, RunDispatched)]
    assert len(later) == 13  # and none of them was judged late again
    for ticket in [d.run for d in dispatched + later]:
        snapshot = engine.snapshot(ticket.task_id)
        assert snapshot.status.next_run_at is not None
        assert snapshot.status.next_run_at > WOKE  # the schedule goes on ahead


def test_the_same_backlog_spreads_the_same_way() -> None:
    first, second = Engine(), Engine()
    _fourteen(first)
    _fourteen(second)
    first.calm_wake(WOKE, SPREAD, can_ask=True)
    second.calm_wake(WOKE, SPREAD, can_ask=True)
    assert _starts(first) == _starts(second)


def test_a_restart_keeps_the_committed_starts() -> None:
    engine = Engine()
    _fourteen(engine)
    engine.calm_wake(WOKE, SPREAD, can_ask=True)
    stored = list(engine.snapshots())
    again = Engine()
    again.load(stored, WOKE + timedelta(minutes=1))
    assert _starts(again) == _starts(engine)
    # A second wake signal (logind after the clock jump) finds nothing to spread.
    _events, question = again.calm_wake(WOKE + timedelta(minutes=1), SPREAD, can_ask=True)
    assert question is None and _starts(again) == _starts(engine)


def test_run_now_starts_them_all_at_once() -> None:
    engine = Engine()
    _fourteen(engine)
    engine.calm_wake(WOKE, NOW, can_ask=True)
    assert set(_starts(engine).values()) == {timedelta(0)}
    dispatched = [e for e in engine.due(WOKE, 20) if isinstance(e, RunDispatched)]
    assert len(dispatched) == 14


def test_ask_holds_them_until_the_answer() -> None:
    engine = Engine()
    _fourteen(engine)
    _events, question = engine.calm_wake(WOKE, ASK, can_ask=True)
    assert question is not None and question.count == 14
    assert question.text == "14 runs were missed while the computer slept"
    assert set(question.names) == {f"task {i}" for i in range(1, 15)}
    assert engine.held_count == 14
    assert [e for e in engine.due(WOKE + HOUR, 20) if isinstance(e, RunDispatched)] == []
    assert {s.status.waiting for s in engine.snapshots()} == {WaitReason.WAKE_ANSWER}
    answered = engine.answer_wake(WakeAnswer.SPREAD, WOKE + HOUR, TEN)
    assert engine.held_count == 0
    assert sum(isinstance(e, TaskChanged) for e in answered) == 14
    starts = sorted(s.status.next_run_at for s in engine.snapshots())  # type: ignore[type-var]
    assert starts == [WOKE + HOUR + TEN * i / 14 for i in range(14)]


def test_ask_answered_run_now() -> None:
    engine = Engine()
    _fourteen(engine)
    engine.calm_wake(WOKE, ASK, can_ask=True)
    engine.answer_wake(WakeAnswer.NOW, WOKE, TEN)
    assert len([e for e in engine.due(WOKE, 20) if isinstance(e, RunDispatched)]) == 14


def test_ask_answered_skip_records_them_missed_with_the_reason() -> None:
    engine = Engine()
    _fourteen(engine)
    engine.add(make_spec(15, first_run_at=T0 + HOUR))  # a one-off task
    engine.calm_wake(WOKE, ASK, can_ask=True)
    events = engine.answer_wake(WakeAnswer.SKIP, WOKE, TEN)
    skipped = [e for e in events if isinstance(e, OccurrencesSkipped)]
    assert len(skipped) == 15 and {e.reason for e in skipped} == {SkipReason.WAKE}
    assert engine.snapshot(15).state is TaskState.MISSED
    assert engine.snapshot(15).status.last_outcome is RunOutcome.MISSED
    # The recurring ones go on from their next occurrence, after the wake-up.
    for task_id in range(1, 15):
        status = engine.snapshot(task_id).status
        assert status.state is TaskState.PENDING and status.next_run_at > WOKE  # type: ignore[operator]
    assert [e for e in engine.due(WOKE, 20) if isinstance(e, RunDispatched)] == []


def test_without_anyone_to_ask_ask_spreads() -> None:
    engine = Engine()
    _fourteen(engine)
    _, question = engine.calm_wake(WOKE, ASK, can_ask=False)
    assert question is None and engine.held_count == 0
    assert sorted(_starts(engine).values()) == [TEN * i / 14 for i in range(14)]


def test_a_tasks_own_policy_wins_over_the_global_one() -> None:
    engine = Engine()
    _fourteen(engine)
    engine.update(replace(engine.snapshot(5).spec, on_wake=parse_wake_policy("now")), T0)
    engine.calm_wake(WOKE, ASK, can_ask=True)
    assert engine.held_count == 13
    assert engine.snapshot(5).status.next_run_at == WOKE
    dispatched = [e.run.task_id for e in engine.due(WOKE, 20) if isinstance(e, RunDispatched)]
    assert dispatched == [5]


def test_a_few_catch_ups_just_run() -> None:
    engine = Engine()
    for task_id in range(1, CALM_FROM):
        engine.add(make_spec(task_id, first_run_at=T0 + HOUR))
    events, question = engine.calm_wake(WOKE, ASK, can_ask=True)
    assert (events, question) == ([], None)
    assert len([e for e in engine.due(WOKE, 20) if isinstance(e, RunDispatched)]) == CALM_FROM - 1


def test_skip_misfire_policy_is_not_overruled() -> None:
    engine = Engine()
    _fourteen(engine, misfire=MisfirePolicy.SKIP)
    _events, question = engine.calm_wake(WOKE, ASK, can_ask=True)
    assert question is None and engine.held_count == 0
    # Nothing late runs; tasks 6 and 12 (first due at 01:00, 02:00) have an 08:00
    # occurrence, due this very moment: on time, it runs.
    due_now = [s.spec.id for s in engine.snapshots() if s.status.next_run_at == WOKE]
    assert due_now == [6, 12]
    assert all(s.status.next_run_at >= WOKE for s in engine.snapshots())  # type: ignore[operator]


def test_a_person_changing_a_held_task_takes_it_out_of_the_hold() -> None:
    engine = Engine()
    _fourteen(engine)
    engine.calm_wake(WOKE, ASK, can_ask=True)
    engine.pause(3)
    engine.run_now(4, WOKE)
    assert engine.held_count == 12
    assert engine.snapshot(3).state is TaskState.PAUSED
    dispatched = [e.run.task_id for e in engine.due(WOKE, 20) if isinstance(e, RunDispatched)]
    assert dispatched == [4]
    engine.remove(6)
    engine.answer_wake(WakeAnswer.NOW, WOKE, TEN)  # the removed one is simply gone
    assert len([e for e in engine.due(WOKE, 20) if isinstance(e, RunDispatched)]) == 11


def test_snapshots_report_the_hold_and_a_load_forgets_it() -> None:
    engine = Engine()
    _fourteen(engine)
    engine.calm_wake(WOKE, ASK, can_ask=True)
    stored: list[TaskSnapshot] = list(engine.snapshots())
    engine.load(stored, WOKE)
    assert engine.held_count == 0
