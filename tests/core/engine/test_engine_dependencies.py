"""Tasks that run after others, in the engine: chains, fan-in, fan-out, coalescing,
recurring upstreams, restarts, and upstreams cancelled or deleted. Time is a FakeClock."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import pytest

from taskgui.core.clock import FakeClock
from taskgui.core.dependencies import After, Upstream
from taskgui.core.engine.engine import Engine
from taskgui.core.errors import InvalidTaskError
from taskgui.core.events import Event, RunDispatched, TaskChanged
from taskgui.core.recurrence import Every
from taskgui.core.states import RunOutcome, SlotKind, TaskState, WaitReason
from taskgui.core.status import RunTicket, TaskSnapshot
from taskgui.core.task import TaskSpec
from tests.helpers.factories import T0, fixed_retry, make_spec

A, B, C, D = 1, 2, 3, 4
HOUR = timedelta(hours=1)
SECOND = timedelta(seconds=1)


def task(task_id: int, *upstreams: int, on: After = After.SUCCEEDED, **more: Any) -> TaskSpec:
    """A task; with upstreams, one that runs only after them unless ``only=False``."""
    only = bool(more.pop("only", bool(upstreams)))
    edges = tuple(Upstream(u, on) for u in upstreams)
    return make_spec(task_id, name=f"T{task_id}", after=edges, only_after=only, **more)


class Harness:
    """An engine, a clock, and a log of which task ran when."""

    def __init__(self, *specs: TaskSpec, workers: int = 4) -> None:
        self.clock = FakeClock(T0)
        self.engine = Engine()
        self.workers = workers
        self.started: list[int] = []
        self.running: dict[int, RunTicket] = {}
        for spec in specs:
            self.engine.add(spec)

    def tick(self) -> list[Event]:
        """Dispatch what is due now; each dispatched run starts."""
        free = self.workers - len(self.running)
        events = self.engine.due(self.clock.now(), free)
        for event in events:
            if isinstance(event, RunDispatched):
                ticket = event.run
                self.engine.started(ticket.run_id, self.clock.now())
                self.started.append(ticket.task_id)
                self.running[ticket.task_id] = ticket
        return events

    def finish(self, task_id: int, outcome: RunOutcome = RunOutcome.SUCCEEDED) -> list[Event]:
        self.clock.advance(SECOND)
        ticket = self.running.pop(task_id)
        return self.engine.finished(ticket.run_id, outcome, self.clock.now())

    def state(self, task_id: int) -> TaskSnapshot:
        return self.engine.snapshot(task_id)


def test_a_chain_of_three_runs_in_order_and_each_once() -> None:
    h = Harness(task(A), task(B, A), task(C, B))
    assert h.state(B).status.waiting is WaitReason.UPSTREAM
    assert h.state(B).status.next_run_at is None  # no schedule of its own
    h.tick()
    assert h.started == [A]
    h.finish(A)
    h.tick()
    assert h.started == [A, B]
    assert h.state(C).status.waiting is WaitReason.UPSTREAM
    h.finish(B)
    h.tick()
    assert h.started == [A, B, C]
    h.finish(C)
    h.clock.advance(HOUR)
    h.tick()
    assert h.started == [A, B, C]  # nothing more: A was a one-off
    # An "only after" task that ran is not finished: it waits for the next trigger.
    assert h.state(C).state is TaskState.PENDING
    assert h.state(C).status.waiting is WaitReason.UPSTREAM


def test_the_trigger_is_in_the_same_event_list_as_the_upstreams_result() -> None:
    h = Harness(task(A), task(B, A))
    h.tick()
    events = h.finish(A)
    changed = [e.task for e in events if isinstance(e, TaskChanged) and e.task.id == B]
    assert changed and changed[-1].status.slot_kind is SlotKind.TRIGGERED
    assert changed[-1].status.next_run_at == h.clock.now()


@pytest.mark.parametrize(
    ("on", "outcome", "runs"),
    [
        (After.SUCCEEDED, RunOutcome.SUCCEEDED, True),
        (After.SUCCEEDED, RunOutcome.FAILED, False),
        (After.FAILED, RunOutcome.FAILED, True),
        (After.FAILED, RunOutcome.SUCCEEDED, False),
        (After.FINISHED, RunOutcome.TIMED_OUT, True),
        (After.FINISHED, RunOutcome.SUCCEEDED, True),
        (After.FINISHED, RunOutcome.CANCELLED, False),
    ],
)
def test_which_end_of_the_upstream_triggers(on: After, outcome: RunOutcome, runs: bool) -> None:
    h = Harness(task(A), task(B, A, on=on))
    h.tick()
    h.finish(A, outcome)
    h.tick()
    assert (B in h.started) is runs


def test_a_failed_attempt_that_will_be_retried_has_not_ended_the_occurrence() -> None:
    h = Harness(task(A, retry=fixed_retry(max_attempts=2, delay=10)), task(B, A, on=After.FAILED))
    h.tick()
    h.finish(A, RunOutcome.FAILED)  # attempt 1 of 2: a retry follows
    h.tick()
    assert h.started == [A]
    h.clock.advance(timedelta(seconds=10))
    h.tick()
    assert h.started == [A, A]
    h.finish(A, RunOutcome.FAILED)  # the last attempt: the occurrence failed
    h.tick()
    assert h.started == [A, A, B]


def test_fan_in_runs_once_every_upstream_has_completed_since_the_last_run() -> None:
    h = Harness(task(A, recurrence=Every(HOUR)), task(C, recurrence=Every(HOUR)), task(B, A, C))
    h.tick()
    assert sorted(h.started) == [A, C]
    h.finish(A)
    h.tick()
    assert B not in h.started
    assert h.state(B).status.after_marks == {A}
    h.finish(C)
    h.tick()
    assert h.started.count(B) == 1
    assert h.state(B).status.after_marks == frozenset()  # cleared by the trigger
    h.finish(B)
    # The next hour: A twice before C once still makes one run of B.
    h.clock.advance(HOUR)
    h.tick()
    h.finish(A)
    h.finish(C)
    h.tick()
    assert h.started.count(B) == 2


def test_fan_in_counts_an_upstream_once_however_often_it_completed() -> None:
    h = Harness(task(A, recurrence=Every(HOUR)), task(C), task(B, A, C))
    for _ in range(3):
        h.tick()
        if A in h.running:
            h.finish(A)
        if C in h.running:
            h.clock.advance(HOUR - SECOND)
            continue
        h.clock.advance(HOUR - SECOND)
    assert B not in h.started
    h.finish(C)
    h.tick()
    assert h.started.count(B) == 1


def test_fan_out_starts_every_task_after_it() -> None:
    h = Harness(task(A), task(B, A), task(C, A), task(D, A, on=After.FAILED))
    h.tick()
    h.finish(A)
    h.tick()
    assert sorted(h.started) == [A, B, C]


def test_a_recurring_upstream_triggers_once_per_completion() -> None:
    h = Harness(task(A, recurrence=Every(HOUR)), task(B, A))
    for _hour in range(5):
        h.tick()
        h.finish(A)
        h.tick()
        h.finish(B)
        h.clock.advance(HOUR - 2 * SECOND)
    assert h.started == [A, B] * 5


def test_triggers_while_the_task_runs_coalesce_into_one_run_after_it() -> None:
    every_minute = Every(timedelta(minutes=1))
    h = Harness(task(A, recurrence=every_minute), task(B, A))
    h.tick()
    h.finish(A)
    h.tick()
    assert h.started == [A, B]  # B runs (long)
    for _ in range(3):  # A completes three more times while B is still running
        h.clock.advance(timedelta(minutes=1) - SECOND)
        h.tick()
        h.finish(A)
        h.tick()
    assert h.started == [A, B, A, A, A]
    assert h.state(B).status.slot_kind is SlotKind.TRIGGERED
    assert h.state(B).status.waiting is WaitReason.PREVIOUS_RUN
    h.finish(B)
    h.tick()
    assert h.started == [A, B, A, A, A, B]  # one run for the three triggers
    h.finish(B)
    h.tick()
    assert h.started.count(B) == 2


def test_triggers_while_the_task_waits_for_a_worker_coalesce() -> None:
    every_minute = Every(timedelta(minutes=1))
    # X holds one of the two workers throughout; B yields the other to A.
    h = Harness(task(D), task(A, recurrence=every_minute), task(B, A, priority=-1), workers=2)
    h.tick()
    assert sorted(h.started) == [A, D]
    h.finish(A)
    h.engine.due(h.clock.now(), 0)
    assert h.state(B).status.waiting is WaitReason.WORKER
    for _ in range(3):  # A wins the free worker and completes again, three times
        h.clock.advance(timedelta(minutes=1) - SECOND)
        h.tick()
        h.finish(A)
        h.engine.due(h.clock.now(), 0)
    assert h.started == [D, A, A, A, A] or sorted(h.started) == [A, A, A, A, D]
    h.finish(D)
    h.tick()
    assert h.started.count(B) == 1  # one run for the four triggers
    h.finish(B)
    h.tick()
    assert h.started.count(B) == 1
    assert h.state(B).status.waiting is WaitReason.UPSTREAM


def test_a_task_with_its_own_schedule_also_runs_after_its_upstream() -> None:
    h = Harness(
        task(A, first_run_at=T0 + 10 * SECOND),
        task(B, A, only=False, recurrence=Every(HOUR), first_run_at=T0 + 30 * 60 * SECOND),
    )
    assert h.state(B).status.slot_kind is SlotKind.OCCURRENCE
    h.clock.advance(10 * SECOND)
    h.tick()
    h.finish(A)
    h.tick()
    assert h.started == [A, B]
    h.finish(B)
    # Its own schedule goes on from where it was.
    assert h.state(B).status.next_run_at == T0 + 30 * 60 * SECOND
    h.clock.advance(30 * 60 * SECOND)
    h.tick()
    assert h.started == [A, B, B]


def test_a_paused_or_cancelled_downstream_ignores_triggers() -> None:
    h = Harness(task(A, recurrence=Every(HOUR)), task(B, A), task(C, A))
    h.engine.pause(B)
    h.engine.cancel(C)
    h.tick()
    h.finish(A)
    h.tick()
    assert h.started == [A]
    h.engine.resume(B)
    h.tick()
    assert h.started == [A]


def test_a_cancelled_upstream_triggers_nothing() -> None:
    h = Harness(task(A), task(B, A))
    h.tick()
    h.engine.cancel(A)
    h.finish(A, RunOutcome.CANCELLED)
    h.tick()
    assert h.started == [A]
    assert h.state(B).status.waiting is WaitReason.UPSTREAM


def test_deleting_an_upstream_clears_its_marks_and_says_so() -> None:
    h = Harness(task(A), task(C), task(B, A, C))
    h.tick()
    h.finish(A)
    assert h.state(B).status.after_marks == {A}
    events = h.engine.remove(A)
    changed = [e.task for e in events if isinstance(e, TaskChanged) and e.task.id == B]
    assert changed and changed[-1].status.after_marks == frozenset()
    assert h.engine.downstream_of(A) == [B]  # B keeps its edge (the person was asked)
    h.finish(C)
    h.tick()
    assert B not in h.started  # it still waits for A, which no longer exists


def test_deleting_a_downstream_forgets_its_edges() -> None:
    h = Harness(task(A), task(B, A))
    h.engine.remove(B)
    assert h.engine.downstream_of(A) == []
    h.tick()
    h.finish(A)  # nothing to trigger, nothing fails


def test_marks_and_triggers_survive_a_restart() -> None:
    h = Harness(task(A), task(C), task(D), task(B, A, C))
    h.tick()
    h.finish(A)
    stored = list(h.engine.snapshots())
    restarted = Engine()
    restarted.load(stored, h.clock.now())
    assert restarted.snapshot(B).status.after_marks == {A}
    h.engine = restarted
    h.running.clear()
    # C was running when it "crashed": interrupted, no retry, so it failed; B waits on.
    assert B not in h.started
    # A fresh C completing now triggers B.
    h.engine.run_now(C, h.clock.now())
    h.tick()
    h.finish(C)
    h.tick()
    assert h.started.count(B) == 1


def test_a_triggered_slot_stored_before_a_crash_runs_once_after_it() -> None:
    h = Harness(task(A), task(B, A))
    h.tick()
    h.finish(A)
    stored = list(h.engine.snapshots())  # committed with A's result; B not started yet
    restarted = Engine()
    restarted.load(stored, h.clock.now())
    h.engine = restarted
    h.tick()
    h.tick()
    assert h.started == [A, B]


def test_refusals_name_the_cycle_and_missing_tasks() -> None:
    h = Harness(task(A), task(B, A), task(C, B))
    cycle = r"cycle: T1 \(1\) -> T3 \(3\) -> T2 \(2\) -> T1 \(1\)$"
    with pytest.raises(InvalidTaskError, match=cycle):
        h.engine.check_upstreams(task(A, C))
    with pytest.raises(InvalidTaskError, match="task 9, which does not exist"):
        h.engine.check_upstreams(task(D, 9))
    h.engine.check_upstreams(task(D, C))  # a fourth link is no cycle


def test_editing_the_edges_rewires_the_index() -> None:
    h = Harness(task(A), task(C), task(B, A))
    h.engine.update(task(B, C), h.clock.now())
    assert h.engine.downstream_of(A) == []
    assert h.engine.downstream_of(C) == [B]
    h.tick()
    h.finish(A)
    h.tick()
    assert B not in h.started
    h.finish(C)
    h.tick()
    assert B in h.started


def test_an_only_after_task_needs_an_upstream_and_no_schedule() -> None:
    with pytest.raises(InvalidTaskError, match="at least one task"):
        make_spec(B, only_after=True)
    with pytest.raises(InvalidTaskError, match="no schedule of its own"):
        task(B, A, recurrence=Every(HOUR))
    with pytest.raises(InvalidTaskError, match="after itself"):
        task(B, B)
