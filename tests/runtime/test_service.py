"""The scheduler service with real threads, real processes and a real database file.

Nothing sleeps to let time pass: each test waits for a signal or a condition, with a
timeout, so a slow machine makes a test slower, not flaky.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from taskgui.core.recurrence import Every
from taskgui.core.retry import Backoff, RetryPolicy
from taskgui.core.states import RunOutcome, TaskState
from taskgui.runtime import service as service_module
from taskgui.store.sqlite.repository import SqliteRepository
from tests.helpers.service import CLOCK, Harness, spec
from tests.helpers.store import raw_connection


@pytest.fixture
def harness(tmp_path: Path, qtbot: QtBot, request: pytest.FixtureRequest) -> Iterator[Harness]:
    marker = request.node.get_closest_marker("workers")
    workers = marker.args[0] if marker else 2
    h = Harness(tmp_path, qtbot, workers)
    yield h
    h.close()


def log_line(path: Path, text: str) -> str:
    return f"echo {text} >> {path}"


@pytest.mark.workers(1)
def test_due_tasks_run_highest_priority_first_while_the_worker_is_busy(
    harness: Harness, tmp_path: Path
) -> None:
    log = tmp_path / "order.log"
    gate = tmp_path / "gate"
    blocker = harness.service.add_task(
        spec("blocker", f"while [ ! -e {gate} ]; do sleep 0.01; done")
    )
    harness.wait_state(blocker.id, TaskState.RUNNING)
    for name, priority in (("low", 1), ("high", 9), ("mid", 5)):
        harness.service.add_task(spec(name, log_line(log, name), priority=priority))
    gate.touch()
    harness.qtbot.waitUntil(lambda: len(harness.finished) == 4, timeout=10_000)
    assert log.read_text().split() == ["high", "mid", "low"]


def test_a_failing_task_retries_with_backoff_and_ends_exhausted(
    harness: Harness, qtbot: QtBot
) -> None:
    retry = RetryPolicy(
        backoff=Backoff.EXPONENTIAL,
        max_attempts=3,
        base_delay=timedelta(milliseconds=100),
        max_delay=timedelta(milliseconds=150),
    )
    retries: list[Any] = []
    harness.service.retry_scheduled.connect(retries.append)
    with qtbot.waitSignal(harness.service.task_exhausted, timeout=10_000) as exhausted:
        task = harness.service.add_task(spec("flaky", "echo nope; exit 4", retry=retry))
    event, error = exhausted.args
    assert (event.task_id, event.attempts) == (task.id, 3)
    assert error == "exit status 4"
    assert [(r.attempt, r.delay) for r in retries] == [
        (2, timedelta(milliseconds=100)),
        (3, timedelta(milliseconds=150)),
    ]
    runs = harness.service.history(task.id)
    assert [run.outcome for run in runs] == [RunOutcome.FAILED] * 3
    assert runs[0].output == "nope\n" and runs[0].exit_code == 4
    assert harness.repository.get(task.id).state is TaskState.EXHAUSTED


def test_timeout_kills_a_command_that_ignores_sigterm_and_its_children(
    harness: Harness, tmp_path: Path
) -> None:
    pidfile = tmp_path / "child.pid"
    line = f"trap '' TERM; sleep 30 & echo $! > {pidfile}; wait; sleep 30"
    task = harness.service.add_task(spec("stubborn", line, timeout=timedelta(seconds=0.5)))
    harness.wait_state(task.id, TaskState.EXHAUSTED)
    _, outcome, result = harness.finished[-1]
    assert outcome is RunOutcome.TIMED_OUT and "timed out" in (result.error or "")
    child = int(pidfile.read_text())
    harness.qtbot.waitUntil(lambda: not _alive(child), timeout=5_000)


def test_cancelling_a_running_task_stops_it_and_leaves_no_process(
    harness: Harness, tmp_path: Path
) -> None:
    pidfile = tmp_path / "cancel.pid"
    task = harness.service.add_task(spec("long", f"echo $$ > {pidfile}; exec sleep 60"))
    harness.qtbot.waitUntil(
        lambda: pidfile.exists() and bool(pidfile.read_text().strip()), timeout=5_000
    )
    pid = int(pidfile.read_text())
    harness.service.cancel(task.id)
    harness.qtbot.waitUntil(lambda: len(harness.finished) == 1, timeout=5_000)
    assert harness.finished[0][1] is RunOutcome.CANCELLED
    assert harness.state(task.id) is TaskState.CANCELLED
    harness.qtbot.waitUntil(lambda: not _alive(pid), timeout=5_000)
    assert harness.repository.get(task.id).state is TaskState.CANCELLED


@pytest.mark.workers(3)
def test_a_concurrency_key_keeps_two_tasks_from_overlapping(
    harness: Harness, tmp_path: Path
) -> None:
    log = tmp_path / "key.log"
    body = f"echo start $N >> {log}; sleep 0.3; echo end $N >> {log}"
    for name in ("a", "b"):
        harness.service.add_task(spec(name, f"N={name}; {body}", concurrency_key="backup"))
    harness.qtbot.waitUntil(lambda: len(harness.finished) == 2, timeout=10_000)
    lines = log.read_text().split("\n")
    assert [line.split()[0] for line in lines if line] == ["start", "end", "start", "end"]


def test_a_recurring_task_keeps_its_cadence(harness: Harness) -> None:
    first = CLOCK.now() + timedelta(milliseconds=100)
    task = harness.service.add_task(
        spec("tick", "true", first_run_at=first, recurrence=Every(timedelta(seconds=1)))
    )
    harness.qtbot.waitUntil(lambda: len(harness.finished) >= 3, timeout=10_000)
    harness.service.cancel(task.id)
    tickets = [ticket for ticket, _, _ in harness.finished[:3]]
    assert [t.scheduled_at for t in tickets] == [first + timedelta(seconds=k) for k in range(3)]
    for ticket in tickets:
        lateness = (ticket.dispatched_at - ticket.scheduled_at).total_seconds()
        assert 0 <= lateness < 0.5, lateness


def test_the_timer_is_rearmed_when_an_earlier_task_is_added(harness: Harness) -> None:
    harness.service.add_task(spec("later", "true", first_run_at=CLOCK.now() + timedelta(hours=1)))
    early = harness.service.add_task(
        spec("sooner", "true", first_run_at=CLOCK.now() + timedelta(milliseconds=200))
    )
    harness.wait_state(early.id, TaskState.SUCCEEDED, timeout=3_000)
    ticket = harness.finished[0][0]
    assert ticket.task_id == early.id
    assert (ticket.dispatched_at - ticket.scheduled_at).total_seconds() < 0.5


def test_the_run_environment_names_the_task(harness: Harness, tmp_path: Path) -> None:
    out = tmp_path / "env.txt"
    task = harness.service.add_task(
        spec("envy", f'echo "$TASKGUI_TASK_ID $TASKGUI_ATTEMPT $TASKGUI_TASK_NAME" > {out}')
    )
    harness.wait_state(task.id, TaskState.SUCCEEDED)
    assert out.read_text().strip() == f"{task.id} 1 envy"


def _alive(pid: int) -> bool:
    """True while ``pid`` is a live (not zombie) process."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(") ")[-1][0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:
        return os.path.exists(f"/proc/{pid}")


def test_a_dispatch_that_cannot_be_committed_never_happened(
    harness: Harness, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Commit before acting: the run is abandoned unstarted, and once the file works
    again the task runs as if nothing had happened (not cancelled, no attempt used)."""
    monkeypatch.setattr(service_module, "STORE_RETRY_MS", 200)
    errors: list[str] = []
    harness.service.error_occurred.connect(errors.append)
    marker = tmp_path / "ran"
    db = harness.tmp_path / "service.sqlite3"
    with raw_connection(db) as other:  # another process takes the history away
        other.execute("ALTER TABLE runs RENAME TO runs_elsewhere")

    task = harness.service.add_task(spec("once", f"echo run >> {marker}"))
    harness.qtbot.waitUntil(lambda: any("runs" in error for error in errors), timeout=5_000)
    with raw_connection(db) as other:
        other.execute("ALTER TABLE runs_elsewhere RENAME TO runs")
    harness.wait_state(task.id, TaskState.SUCCEEDED)

    assert marker.read_text() == "run\n"  # ran once, after the file worked again
    [run] = harness.service.history(task.id)
    assert (run.attempt, run.outcome) == (1, RunOutcome.SUCCEEDED)
    assert harness.repository.get(task.id).state is TaskState.SUCCEEDED


def test_a_running_command_shows_its_output_so_far_to_views_and_other_processes(
    tmp_path: Path, qtbot: QtBot
) -> None:
    harness = Harness(tmp_path, qtbot, 1, output_save_ms=50)
    go = tmp_path / "go"
    try:
        line = f"echo first; while [ ! -e {go} ]; do sleep 0.01; done; echo second"
        with qtbot.waitSignal(
            harness.service.run_output,
            timeout=10_000,
            check_params_cb=lambda _ticket, text: text == "first\n",
        ) as printed:
            task = harness.service.add_task(spec("talks", line))
        ticket = printed.args[0]
        assert ticket.task_id == task.id
        [running] = harness.service.history(task.id)
        assert (running.outcome, running.output) == (None, "first\n")  # the live tail

        other = SqliteRepository(harness.repository.path)  # as the CLI or a window sees it
        try:

            def saved() -> None:
                assert other.runs(task.id)[0].output == "first\n"

            qtbot.waitUntil(saved, timeout=5_000)
            go.touch()
            harness.wait_state(task.id, TaskState.SUCCEEDED)
            [done] = other.runs(task.id)
            assert (done.outcome, done.output) == (RunOutcome.SUCCEEDED, "first\nsecond\n")
        finally:
            other.close()
    finally:
        go.touch()
        harness.close()


def test_a_run_stopped_by_a_shutdown_says_why(harness: Harness, qtbot: QtBot) -> None:
    task = harness.service.add_task(spec("long", "sleep 30"))
    harness.wait_state(task.id, TaskState.RUNNING)
    assert harness.service.running_task_names() == ["long"]
    with qtbot.waitSignal(harness.service.stopped, timeout=10_000):
        harness.service.shutdown(grace=0.0, reason="taskgui quit")
    harness.stopped = True
    [run] = harness.repository.runs(task.id)
    assert (run.outcome, run.error) == (RunOutcome.INTERRUPTED, "stopped because taskgui quit")
