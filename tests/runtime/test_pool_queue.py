"""Runs queued in the pool beyond its free workers (``queue_per_worker``): taken by the
next worker that finishes, shown as waiting until then, and taken back for a more
urgent task, a pause or an edit.

Real service, real database, real processes, one worker: a first task holds it until
the test lets it go (a file appears), so whatever is dispatched meanwhile is queued.
Each command appends its name to one file, so the order the processes ran in is read
back from it; nothing here depends on timing.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from taskgui.core.states import TaskState, WaitReason
from taskgui.core.status import TaskSnapshot
from taskgui.core.task import Command, TaskId, TaskSpec
from tests.helpers.service import Harness, spec


@pytest.fixture
def harness(tmp_path: Path, qtbot: QtBot) -> Iterator[Harness]:
    h = Harness(tmp_path, qtbot, 1, queue_per_worker=2)
    yield h
    h.close()


class Seen:
    """Every state each task was published in, in order."""

    def __init__(self, harness: Harness) -> None:
        self.states: dict[TaskId, list[TaskState]] = {}
        harness.service.task_changed.connect(self._on_task_changed)

    def _on_task_changed(self, snapshot: TaskSnapshot) -> None:
        self.states.setdefault(snapshot.spec.id, []).append(snapshot.state)


def _log(tmp_path: Path, name: str) -> str:
    return f"echo {name} >> {tmp_path / 'order'}"


def _order(tmp_path: Path) -> list[str]:
    return (tmp_path / "order").read_text().split()


def _hold_the_worker(harness: Harness, tmp_path: Path) -> TaskSpec:
    """A task that runs until ``release`` exists; returned once its process runs."""
    line = f"while [ ! -e {tmp_path / 'release'} ]; do sleep 0.02; done; " + _log(tmp_path, "A")
    blocker = harness.service.add_task(spec("blocker", line))
    harness.qtbot.waitUntil(
        lambda: harness.service.task(blocker.id).status.running_since is not None, timeout=10_000
    )
    return blocker


def _queued(harness: Harness, *tasks: TaskSpec) -> None:
    """Wait until each task has a run dispatched (the blocker's worker is busy: queued)."""

    def dispatched() -> bool:
        ids = {ticket.task_id for ticket in harness.service.engine.running_runs.values()}
        return all(task.id in ids for task in tasks)

    harness.qtbot.waitUntil(dispatched, timeout=10_000)


def _release(harness: Harness, tmp_path: Path, *tasks: TaskSpec) -> None:
    (tmp_path / "release").touch()
    for task in tasks:
        harness.wait_state(task.id, TaskState.SUCCEEDED)


def _run_rows(tmp_path: Path, task_id: TaskId) -> list[tuple[str | None, int | None]]:
    with sqlite3.connect(tmp_path / "service.sqlite3") as connection:
        rows = connection.execute(
            "SELECT outcome, started_at FROM runs WHERE task_id = ? ORDER BY id", (task_id,)
        ).fetchall()
    connection.close()
    return [(outcome, started) for outcome, started in rows]


def test_queued_runs_wait_as_pending_and_run_in_priority_order_when_a_worker_frees(
    harness: Harness, tmp_path: Path
) -> None:
    seen = Seen(harness)
    blocker = _hold_the_worker(harness, tmp_path)
    low, high = harness.service.add_tasks(
        [
            spec("low", _log(tmp_path, "low"), priority=1),
            spec("high", _log(tmp_path, "high"), priority=3),
        ]
    )
    _queued(harness, low, high)
    assert harness.service.busy_workers == 1  # the queued runs have no worker yet
    for task in (low, high):  # dispatched and committed, but not shown as running
        status = harness.service.task(task.id).status
        assert status.state is TaskState.PENDING
        assert status.waiting is WaitReason.WORKER
        assert status.running == 0
        assert TaskState.RUNNING not in seen.states[task.id]
        [(outcome, started)] = _run_rows(tmp_path, task.id)
        assert outcome is None and started is None  # durable as dispatched, not started
    _release(harness, tmp_path, blocker, low, high)

    assert _order(tmp_path) == ["A", "high", "low"]
    for task in (low, high):
        [(outcome, started)] = _run_rows(tmp_path, task.id)
        assert outcome == "succeeded" and started is not None


def test_a_more_urgent_task_arriving_while_runs_are_queued_goes_first(
    harness: Harness, tmp_path: Path
) -> None:
    blocker = _hold_the_worker(harness, tmp_path)
    first, second = harness.service.add_tasks(
        [spec("first", _log(tmp_path, "first")), spec("second", _log(tmp_path, "second"))]
    )
    _queued(harness, first, second)  # the queue (two places) is full
    urgent = harness.service.add_task(spec("urgent", _log(tmp_path, "urgent"), priority=5))
    # It takes the place of the least urgent run queued last, which waits again.
    _queued(harness, urgent, first)
    assert harness.service.task(second.id).status.waiting is WaitReason.WORKER
    assert _run_rows(tmp_path, second.id) == []  # taken back: as if never dispatched
    _release(harness, tmp_path, blocker, first, second, urgent)

    assert _order(tmp_path) == ["A", "urgent", "first", "second"]
    assert [outcome for outcome, _ in _run_rows(tmp_path, second.id)] == ["succeeded"]


def test_several_urgent_tasks_overtake_every_queued_run_of_less_priority(
    harness: Harness, tmp_path: Path
) -> None:
    blocker = _hold_the_worker(harness, tmp_path)
    lows = harness.service.add_tasks([spec(f"low{n}", _log(tmp_path, f"low{n}")) for n in (1, 2)])
    _queued(harness, *lows)
    urgent = harness.service.add_tasks(
        [spec(f"urgent{n}", _log(tmp_path, f"urgent{n}"), priority=5) for n in (1, 2)]
    )
    _queued(harness, *urgent)
    _release(harness, tmp_path, blocker, *lows, *urgent)

    assert _order(tmp_path) == ["A", "urgent1", "urgent2", "low1", "low2"]


def test_pausing_or_editing_a_task_takes_its_queued_run_back(
    harness: Harness, tmp_path: Path
) -> None:
    blocker = _hold_the_worker(harness, tmp_path)
    paused, edited = harness.service.add_tasks(
        [spec("paused", _log(tmp_path, "paused")), spec("edited", _log(tmp_path, "old"))]
    )
    _queued(harness, paused, edited)
    harness.service.pause(paused.id)
    harness.service.update_task(replace(edited, command=Command(line=_log(tmp_path, "new"))))
    _release(harness, tmp_path, blocker, edited)

    assert _order(tmp_path) == ["A", "new"]  # the edit's command, not the queued one
    assert harness.state(paused.id) is TaskState.PAUSED
    assert _run_rows(tmp_path, paused.id) == []


def test_shutdown_takes_queued_runs_back_and_the_next_start_runs_them(
    harness: Harness, tmp_path: Path, qtbot: QtBot
) -> None:
    _hold_the_worker(harness, tmp_path)
    queued = harness.service.add_task(spec("queued", _log(tmp_path, "queued")))
    _queued(harness, queued)
    with qtbot.waitSignal(harness.service.stopped, timeout=10_000):
        harness.service.shutdown(grace=0.0)
    harness.stopped = True
    assert _run_rows(tmp_path, queued.id) == []  # it never started: no run recorded
    harness.service.pool.wait_for_done(5_000)
    harness.repository.close()

    again = Harness(tmp_path, qtbot, 1, queue_per_worker=2)
    try:
        (tmp_path / "release").touch()
        again.wait_state(queued.id, TaskState.SUCCEEDED)
    finally:
        again.close()
    assert "queued" in _order(tmp_path)


def test_a_run_that_waited_in_the_queue_ends_after_it_started(
    harness: Harness, tmp_path: Path
) -> None:
    """A trial's history: a run queued behind a busy worker for 3 s was recorded as
    finished before it started (took -3 s): its end was counted from when it was
    queued, plus the duration the runner measured."""
    blocker = _hold_the_worker(harness, tmp_path)
    [waiter] = harness.service.add_tasks([spec("waiter", _log(tmp_path, "waiter"))])
    _queued(harness, waiter)
    time.sleep(1.5)  # queued for longer than the drift a record's times may show
    _release(harness, tmp_path, blocker, waiter)
    with sqlite3.connect(tmp_path / "service.sqlite3") as connection:
        [(started, finished)] = connection.execute(
            "SELECT started_at, finished_at FROM runs WHERE task_id = ?", (waiter.id,)
        ).fetchall()
    connection.close()
    assert finished >= started, (started, finished)
    assert finished - started < 2_000_000  # `echo`: nowhere near its 1.5 s in the queue
