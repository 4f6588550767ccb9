"""Dispatch ahead: runs committed before their deadline and started by their own worker
thread at it (see ``taskgui.runtime.service``).

Real service, real database, real processes. The window is widened to ``LEAD`` so that
it is reached long before the deadline even on a slow machine; what is asserted is
order, never speed: a process writes when it started (``date``), and that is compared
with its scheduled time with a small tolerance in one direction only.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from taskgui.core.recurrence import Every
from taskgui.core.states import RunOutcome, TaskState, WaitReason
from taskgui.core.status import TaskSnapshot
from taskgui.core.task import TaskId
from tests.helpers.factories import fixed_retry
from tests.helpers.service import CLOCK, Harness, spec

LEAD = 1.0  # seconds the service dispatches ahead in these tests
DUE_IN = timedelta(seconds=1.5)  # from adding a task to its deadline: past the window
# The worker waits on the monotonic clock, ``date`` reads the wall clock: allow for
# the two drifting apart (NTP slewing) over the wait, in the early direction only.
CLOCK_SKEW = 0.002


class Dispatches:
    """When each task was first seen running (its run dispatched), by the wall clock."""

    def __init__(self, harness: Harness) -> None:
        self.at: dict[TaskId, datetime] = {}
        harness.service.task_changed.connect(self._on_task_changed)

    def _on_task_changed(self, snapshot: TaskSnapshot) -> None:
        if snapshot.state is TaskState.RUNNING:
            self.at.setdefault(snapshot.spec.id, CLOCK.now())


@pytest.fixture
def harness(tmp_path: Path, qtbot: QtBot, request: pytest.FixtureRequest) -> Iterator[Harness]:
    marker = request.node.get_closest_marker("workers")
    h = Harness(tmp_path, qtbot, marker.args[0] if marker else 2, dispatch_ahead=LEAD)
    yield h
    h.close()


@pytest.fixture
def dispatches(harness: Harness) -> Dispatches:
    return Dispatches(harness)


def stamp(path: Path) -> str:
    """A command line that writes the moment its process started (epoch seconds)."""
    return f"date +%s.%N > {path}"


def started_at(path: Path) -> float:
    return float(path.read_text())


def test_a_run_dispatched_ahead_starts_its_process_no_earlier_than_its_time(
    harness: Harness, dispatches: Dispatches, tmp_path: Path
) -> None:
    out = tmp_path / "started"
    due = CLOCK.now() + DUE_IN
    task = harness.service.add_task(spec("stamp", stamp(out), first_run_at=due))
    harness.wait_state(task.id, TaskState.SUCCEEDED)

    assert dispatches.at[task.id] < due  # dispatched (and committed) ahead of its time
    assert started_at(out) >= due.timestamp() - CLOCK_SKEW  # yet started at it
    [(ticket, outcome, _)] = harness.finished
    assert outcome is RunOutcome.SUCCEEDED
    # dispatched_at is the moment the run was released to start: its deadline.
    assert ticket.dispatched_at == ticket.scheduled_at == due
    [run] = harness.service.history(task.id)
    assert run.started_at == due and run.pid is not None


@pytest.mark.parametrize("action", ["cancel", "delete"])
def test_a_run_waiting_for_its_start_time_is_taken_back_by_cancel_or_delete(
    harness: Harness, tmp_path: Path, action: str
) -> None:
    """It never started, so it never happened: no process, no run in the history."""
    marker = tmp_path / "ran"
    retries: list[Any] = []
    harness.service.retry_scheduled.connect(retries.append)
    due = CLOCK.now() + DUE_IN
    task = harness.service.add_task(
        spec(
            "doomed",
            f"touch {marker}",
            first_run_at=due,
            recurrence=Every(timedelta(hours=1)),
            retry=fixed_retry(max_attempts=3, delay=0.1),
        )
    )
    harness.wait_state(task.id, TaskState.RUNNING)
    assert CLOCK.now() < due  # so its run is waiting for its start time

    # The pool reports the run's end (started nothing) after the service has heard.
    with harness.qtbot.waitSignal(harness.service.pool.run_completed, timeout=5_000):
        getattr(harness.service, action)(task.id)

    assert harness.finished == [] and retries == [] and not marker.exists()
    if action == "delete":
        assert task.id not in harness.service.engine
        return
    assert harness.state(task.id) is TaskState.CANCELLED
    assert harness.repository.get(task.id).state is TaskState.CANCELLED
    assert harness.service.history(task.id) == []


def test_pausing_while_a_run_waits_for_its_start_time_lets_that_run_go_on(
    harness: Harness, tmp_path: Path
) -> None:
    """As for any running run: pause holds back the runs after it, not this one."""
    out = tmp_path / "started"
    due = CLOCK.now() + DUE_IN
    task = harness.service.add_task(
        spec("hourly", stamp(out), first_run_at=due, recurrence=Every(timedelta(hours=1)))
    )
    harness.wait_state(task.id, TaskState.RUNNING)
    assert CLOCK.now() < due  # its run is waiting for its start time

    harness.service.pause(task.id)
    harness.qtbot.waitUntil(lambda: len(harness.finished) == 1, timeout=5_000)

    [(_, outcome, _)] = harness.finished
    assert outcome is RunOutcome.SUCCEEDED
    assert started_at(out) >= due.timestamp() - CLOCK_SKEW
    assert harness.state(task.id) is TaskState.PAUSED
    assert harness.repository.get(task.id).state is TaskState.PAUSED
    assert harness.service.engine.next_deadline() is None  # nothing more until resumed


@pytest.mark.workers(2)
def test_the_only_free_worker_goes_to_the_higher_priority_task_and_none_starts_early(
    harness: Harness, dispatches: Dispatches, tmp_path: Path
) -> None:
    gate = tmp_path / "gate"
    blocker = harness.service.add_task(
        spec("blocker", f"while [ ! -e {gate} ]; do sleep 0.01; done")
    )
    harness.wait_state(blocker.id, TaskState.RUNNING)
    due = CLOCK.now() + DUE_IN
    stamps = {name: tmp_path / name for name in ("low", "high")}
    low = harness.service.add_task(spec("low", stamp(stamps["low"]), first_run_at=due, priority=1))
    high = harness.service.add_task(
        spec("high", stamp(stamps["high"]), first_run_at=due, priority=9)
    )

    # Ahead of the deadline, the one free worker is given to the higher priority...
    harness.wait_state(high.id, TaskState.RUNNING)
    assert dispatches.at[high.id] < due
    assert harness.service.task(low.id).status.waiting is WaitReason.WORKER
    # ...and a worker freed before the deadline takes the other one for the deadline.
    gate.touch()
    harness.qtbot.waitUntil(lambda: len(harness.finished) == 3, timeout=10_000)

    tickets = {ticket.task_id: ticket for ticket, _, _ in harness.finished}
    assert tickets[high.id].run_id < tickets[low.id].run_id
    assert dispatches.at[low.id] < due
    for path in stamps.values():
        assert started_at(path) >= due.timestamp() - CLOCK_SKEW
    assert tickets[low.id].dispatched_at == due


def test_each_deadline_in_the_window_is_dispatched_for_its_own_time(
    harness: Harness, dispatches: Dispatches, tmp_path: Path
) -> None:
    first_due = CLOCK.now() + DUE_IN
    second_due = first_due + timedelta(seconds=LEAD / 4)  # inside the first one's window
    first = harness.service.add_task(
        spec("first", stamp(tmp_path / "first"), first_run_at=first_due, priority=1)
    )
    second = harness.service.add_task(
        spec("second", stamp(tmp_path / "second"), first_run_at=second_due, priority=9)
    )
    for task in (first, second):
        harness.wait_state(task.id, TaskState.SUCCEEDED)

    assert dispatches.at[first.id] < first_due and dispatches.at[second.id] < second_due
    assert started_at(tmp_path / "first") >= first_due.timestamp() - CLOCK_SKEW
    assert started_at(tmp_path / "second") >= second_due.timestamp() - CLOCK_SKEW
    tickets = {ticket.task_id: ticket for ticket, _, _ in harness.finished}
    assert tickets[first.id].dispatched_at == first_due
    assert tickets[second.id].dispatched_at == second_due


def test_shutdown_while_a_run_waits_for_its_start_time_takes_it_back(
    harness: Harness, tmp_path: Path
) -> None:
    """It never ran: no interrupted attempt is counted, and the next start runs it."""
    marker = tmp_path / "ran"
    due = CLOCK.now() + DUE_IN
    task = harness.service.add_task(spec("late", f"touch {marker}", first_run_at=due))
    harness.wait_state(task.id, TaskState.RUNNING)
    assert CLOCK.now() < due

    with harness.qtbot.waitSignal(harness.service.stopped, timeout=5_000):
        harness.service.shutdown(grace=0.0)

    assert not marker.exists() and harness.finished == []
    stored = harness.repository.get(task.id)
    assert (stored.state, stored.status.attempt, stored.status.next_run_at) == (
        TaskState.PENDING,
        0,
        due,
    )
    assert harness.service.history(task.id) == []

    restarted = Harness(harness.tmp_path, harness.qtbot, 1)  # the same database file
    try:
        restarted.wait_state(task.id, TaskState.SUCCEEDED)
        [run] = restarted.service.history(task.id)
    finally:
        restarted.close()
    assert run.attempt == 1 and run.outcome is RunOutcome.SUCCEEDED and marker.exists()


@pytest.mark.workers(1)
def test_a_more_urgent_task_arriving_during_the_wait_takes_the_worker_first(
    harness: Harness, tmp_path: Path
) -> None:
    """The run dispatched ahead gives its worker back rather than make it wait."""
    stamps = {name: tmp_path / name for name in ("low", "high")}
    due = CLOCK.now() + DUE_IN
    low = harness.service.add_task(
        spec("low", f"{stamp(stamps['low'])}; sleep 0.5", first_run_at=due, priority=0)
    )
    harness.wait_state(low.id, TaskState.RUNNING)  # dispatched ahead, holding the worker
    assert CLOCK.now() < due

    high = harness.service.add_task(spec("high", stamp(stamps["high"]), priority=9))
    harness.qtbot.waitUntil(lambda: len(harness.finished) == 2, timeout=10_000)

    assert [ticket.task_id for ticket, _, _ in harness.finished] == [high.id, low.id]
    assert started_at(stamps["high"]) < started_at(stamps["low"])
    assert started_at(stamps["low"]) >= due.timestamp() - CLOCK_SKEW  # never early
    # The withdrawn dispatch left no trace: one run each, both succeeded.
    for task_id in (low.id, high.id):
        [run] = harness.service.history(task_id)
        assert run.outcome is RunOutcome.SUCCEEDED


def test_shutdown_with_a_grace_lets_a_waiting_run_start_at_its_time(
    harness: Harness, tmp_path: Path
) -> None:
    out = tmp_path / "started"
    due = CLOCK.now() + DUE_IN
    task = harness.service.add_task(spec("last", stamp(out), first_run_at=due))
    harness.wait_state(task.id, TaskState.RUNNING)
    assert CLOCK.now() < due

    with harness.qtbot.waitSignal(harness.service.stopped, timeout=10_000):
        harness.service.shutdown(grace=10.0)

    [(_, outcome, _)] = harness.finished
    assert outcome is RunOutcome.SUCCEEDED
    assert started_at(out) >= due.timestamp() - CLOCK_SKEW
    assert harness.repository.get(task.id).state is TaskState.SUCCEEDED


@pytest.mark.workers(1)
def test_a_waiting_run_that_cannot_be_taken_back_never_blocks_later_dispatches(
    harness: Harness, tmp_path: Path
) -> None:
    """Edited, then deleted while its run waits: that run goes ahead (it is no longer
    the task it was), and tasks added afterwards are dispatched as usual."""
    due = CLOCK.now() + DUE_IN
    task = harness.service.add_task(
        spec("held", "true", first_run_at=due, recurrence=Every(timedelta(hours=1)))
    )
    harness.wait_state(task.id, TaskState.RUNNING)
    assert CLOCK.now() < due
    harness.service.update_task(replace(harness.service.task(task.id).spec, priority=1))
    harness.service.delete(task.id)
    harness.service.set_workers(2)

    added = harness.service.add_tasks(
        [spec("first", "true", priority=9), spec("second", "true", priority=8)]
    )

    harness.qtbot.waitUntil(lambda: len(harness.finished) == 3, timeout=10_000)
    assert {ticket.task_id for ticket, _, _ in harness.finished} >= {s.id for s in added}
