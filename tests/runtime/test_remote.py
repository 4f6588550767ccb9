"""Following a schedule that another process runs, and steering it through requests,
on the follower's own thread, woken by the change feed.

The other process is ``tests.cli.request_server``: it holds the scheduler lock and
performs requests with ``Operations.perform``, which is what a daemon does with them.
"""

from __future__ import annotations

import sqlite3
import subprocess
import threading
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from taskgui.control.operations import Operations
from taskgui.core.clock import SystemClock
from taskgui.core.engine.engine import Engine
from taskgui.core.errors import TaskNotFoundError
from taskgui.core.events import RetryScheduled, RunDispatched, TaskExhausted
from taskgui.core.retry import Backoff, RetryPolicy
from taskgui.core.states import RunOutcome, TaskState, WaitReason
from taskgui.core.status import RunResult, RunTicket, TaskSnapshot
from taskgui.core.task import Command, TaskSpec
from taskgui.runtime import feed_watch
from taskgui.runtime.remote import RemoteScheduler, ScheduleNotRunningError, describe_owner
from taskgui.store.memory import MemoryRepository
from taskgui.store.protocols import ScheduleHolder
from taskgui.store.sqlite.repository import SqliteRepository
from tests.helpers.processes import request_server

CLOCK = SystemClock()
LATER = timedelta(hours=1)


def spec(name: str, **fields: Any) -> TaskSpec:
    values: dict[str, Any] = {
        "name": name,
        "command": Command(line="true"),
        "first_run_at": CLOCK.now() + LATER,
        "retry": RetryPolicy.no_retry(),
    }
    values.update(fields)
    return TaskSpec(**values)


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "remote.sqlite3"
    SqliteRepository(path).close()  # created before anyone opens it
    return path


@pytest.fixture
def scheduler(db: Path) -> Iterator[subprocess.Popen[str]]:
    """A separate process holding the scheduler lock and answering requests."""
    with request_server(db) as child:
        yield child


@pytest.fixture
def repository(db: Path) -> Iterator[SqliteRepository]:
    opened = SqliteRepository(db)
    yield opened
    opened.close()


@pytest.fixture
def remote(repository: SqliteRepository) -> Iterator[RemoteScheduler]:
    view = RemoteScheduler(repository, CLOCK)
    yield view
    view.shutdown()


def named(name: str) -> Any:
    return lambda snapshot: isinstance(snapshot, TaskSnapshot) and snapshot.spec.name == name


def test_the_view_picks_up_a_task_added_by_another_process(
    db: Path, scheduler: subprocess.Popen[str], remote: RemoteScheduler, qtbot: QtBot
) -> None:
    remote.start()
    assert remote.owner.startswith("process ")  # the lock holder, by pid
    assert remote.snapshot() == []
    writer = SqliteRepository(db)  # another connection: as the CLI would
    try:
        with qtbot.waitSignal(remote.task_added, timeout=3_000, check_params_cb=named("CLI")):
            (stored,) = writer.add_tasks([spec("CLI")], CLOCK.now())
    finally:
        writer.close()
    assert [s.id for s in remote.snapshot()] == [stored.id]
    assert remote.task(stored.id).spec.name == "CLI"


def test_a_cancel_reaches_the_process_that_runs_the_schedule(
    scheduler: subprocess.Popen[str], remote: RemoteScheduler, qtbot: QtBot
) -> None:
    remote.start()
    with qtbot.waitSignal(remote.task_added, timeout=3_000) as added:
        remote.add_task(spec("Doomed"))  # inserted here (on the follower's thread)
    task = added.args[0]  # the stored task, with its id
    errors: list[str] = []
    remote.error_occurred.connect(errors.append)

    def cancelled(snapshot: object) -> bool:
        return isinstance(snapshot, TaskSnapshot) and snapshot.state is TaskState.CANCELLED

    with qtbot.waitSignal(remote.task_changed, timeout=3_000, check_params_cb=cancelled):
        remote.cancel(task.id)
    qtbot.waitUntil(lambda: remote.pending_requests == 0, timeout=3_000)
    assert errors == []
    assert remote.task(task.id).state is TaskState.CANCELLED


def test_a_refused_request_is_reported(
    scheduler: subprocess.Popen[str], remote: RemoteScheduler, qtbot: QtBot
) -> None:
    remote.start()
    with qtbot.waitSignal(remote.task_added, timeout=3_000) as added:
        remote.add_task(spec("Fine"))
    task = added.args[0]
    with qtbot.waitSignal(remote.error_occurred, timeout=3_000) as refused:
        remote.retry_now(task.id)  # it has not failed: the owner says no
    assert refused.args[0].startswith("Could not retry “Fine”: ")
    with pytest.raises(TaskNotFoundError):
        remote.pause(9_999)


def test_when_the_owner_stops_changes_are_refused(
    scheduler: subprocess.Popen[str], remote: RemoteScheduler, qtbot: QtBot
) -> None:
    remote.start()
    with qtbot.waitSignal(remote.task_added, timeout=3_000) as added:
        remote.add_task(spec("Left behind"))
    task = added.args[0]
    with qtbot.waitSignal(remote.owner_changed, timeout=5_000) as changed:
        scheduler.terminate()
        scheduler.wait(timeout=10)
    assert changed.args == [""]
    with pytest.raises(ScheduleNotRunningError):
        remote.pause(task.id)


def test_finished_runs_are_announced_with_what_their_failure_means(
    db: Path, repository: SqliteRepository, qtbot: QtBot
) -> None:
    """Another process runs a task that fails twice; the view says so, run by run."""
    remote = RemoteScheduler(repository, CLOCK, owner=lambda: "a test", threaded=False)
    remote.start()
    writer = SqliteRepository(db)
    engine = Engine()
    operations = Operations(engine, writer)
    now = CLOCK.now()
    retry = RetryPolicy(
        backoff=Backoff.FIXED,
        max_attempts=2,
        base_delay=timedelta(seconds=30),
        max_delay=timedelta(seconds=30),
    )
    (task,), _ = operations.add([spec("Flaky", first_run_at=now, retry=retry)], now)
    finished: list[tuple[Any, ...]] = []
    retries: list[RetryScheduled] = []
    exhausted: list[tuple[TaskExhausted, str]] = []
    remote.run_finished.connect(lambda *args: finished.append(args))
    remote.retry_scheduled.connect(retries.append)
    remote.task_exhausted.connect(lambda event, error: exhausted.append((event, error)))

    def fail_once(at: Any) -> None:
        dispatched = engine.due(at, 1)
        writer.apply(dispatched, at)
        (run,) = [e.run for e in dispatched if isinstance(e, RunDispatched)]
        ended = engine.finished(run.run_id, RunOutcome.FAILED, at)
        writer.apply(ended, at, {run.run_id: RunResult(exit_code=1, error="exit status 1")})

    try:
        fail_once(now)
        remote.poll()
        assert [(t.task_id, outcome) for t, outcome, _ in finished] == [
            (task.id, RunOutcome.FAILED)
        ]
        assert finished[0][2].error == "exit status 1"
        assert [(r.task_id, r.attempt, r.max_attempts) for r in retries] == [(task.id, 2, 2)]
        assert remote.task(task.id).state is TaskState.RETRYING
        fail_once(now + timedelta(seconds=31))
        remote.poll()
    finally:
        writer.close()
    assert len(finished) == 2
    ((event, error),) = exhausted
    assert (event.task_id, event.name, event.attempts, error) == (
        task.id,
        "Flaky",
        2,
        "exit status 1",
    )
    assert remote.task(task.id).state is TaskState.EXHAUSTED
    remote.shutdown()


class Owner:
    """Another process running the schedule, played here step by step: an engine and
    its own connection, committing what the engine decides (as the service does)."""

    def __init__(self, db: Path) -> None:
        self.writer = SqliteRepository(db)
        self.engine = Engine()
        self.now = CLOCK.now()

    def add_due(self, *names: str) -> list[TaskSpec]:
        specs = [spec(name, first_run_at=self.now) for name in names]
        added, _ = Operations(self.engine, self.writer).add(specs, self.now)
        return added

    def dispatch(self, workers: int = 1) -> list[RunTicket]:
        events = self.engine.due(self.now, workers)
        self.writer.apply(events, self.now)
        return [event.run for event in events if isinstance(event, RunDispatched)]

    def close(self) -> None:
        self.writer.close()


def test_the_view_says_what_the_owner_keeps_a_due_task_waiting_for(
    db: Path, repository: SqliteRepository, qtbot: QtBot
) -> None:
    """One worker, two due tasks: the owner records the wait, and the view shows it."""
    remote = RemoteScheduler(repository, CLOCK, owner=lambda: "a test")
    owner = Owner(db)
    engine, writer, now = owner.engine, owner.writer, owner.now
    try:
        first, second = owner.add_due("Runs", "Waits")
        owner.dispatch()
        remote.start()
        assert remote.task(first.id).state is TaskState.RUNNING
        assert remote.task(second.id).status.waiting is WaitReason.WORKER
        (running,) = engine.running_runs
        writer.apply(engine.finished(running, RunOutcome.SUCCEEDED, now), now)
        writer.apply(engine.due(now, 1), now)  # the freed worker takes the waiting task

        def started() -> None:
            assert remote.task(second.id).state is TaskState.RUNNING
            assert remote.task(second.id).status.waiting is None

        qtbot.waitUntil(started, timeout=3_000)
    finally:
        owner.close()
        remote.shutdown()


def test_the_view_shows_what_a_run_of_the_owner_printed_so_far(
    db: Path, repository: SqliteRepository
) -> None:
    remote = RemoteScheduler(repository, CLOCK, owner=lambda: "a test", threaded=False)
    owner = Owner(db)
    writer = owner.writer
    try:
        (task,) = owner.add_due("Talks")
        (run,) = owner.dispatch()
        remote.start()
        printed: list[tuple[Any, str]] = []
        remote.run_output.connect(lambda ticket, text: printed.append((ticket, text)))
        writer.record_run_output(run.run_id, "step 1\n")
        remote.poll()
        writer.record_run_output(run.run_id, "step 1\nstep 2\n")
        remote.poll()
        remote.poll()  # nothing new: nothing said
        assert [text for _, text in printed] == ["step 1\n", "step 1\nstep 2\n"]
        ticket = printed[0][0]
        assert (ticket.task_id, ticket.dispatched_at) == (task.id, run.dispatched_at)
        [record] = remote.history(task.id)
        assert record.output == "step 1\nstep 2\n"
    finally:
        owner.close()
        remote.shutdown()


def test_the_owner_is_named_from_its_command_line(tmp_path: Path) -> None:
    def process(pid: int, *arguments: str) -> None:
        folder = tmp_path / str(pid)
        folder.mkdir()
        (folder / "cmdline").write_bytes(b"\0".join(a.encode() for a in arguments) + b"\0")

    process(10, "/usr/bin/python3", "-m", "taskgui", "--db", "x", "daemon")
    process(11, "/home/me/.venv/bin/taskgui", "daemon", "--workers", "2")
    process(12, "/home/me/.venv/bin/taskgui")
    process(13, "bash")
    assert describe_owner(10, tmp_path) == "taskgui daemon (pid 10)"
    assert describe_owner(11, tmp_path) == "taskgui daemon (pid 11)"
    assert describe_owner(12, tmp_path) == "another taskgui (pid 12)"
    assert describe_owner(13, tmp_path) == "process 13"
    assert describe_owner(14, tmp_path) == "process 14"
    assert describe_owner(None, tmp_path) == "another process"


def test_the_owner_is_whoever_the_store_says_holds_the_schedule(qtbot: QtBot) -> None:
    """No lock file here: the runtime asks the store (HolderProbe), whichever it is."""
    store = MemoryRepository()
    remote = RemoteScheduler(store, CLOCK)
    try:
        remote.start()
        assert remote.owner == ""  # nobody: the window offers to run it here
        store.database.holder = ScheduleHolder(pid=None)
        remote.shutdown()
        remote.start()
        assert remote.owner == "another process"
    finally:
        remote.shutdown()


def test_a_schedule_run_elsewhere_has_no_worker_count_to_set(
    repository: SqliteRepository,
) -> None:
    remote = RemoteScheduler(repository, CLOCK, owner=lambda: "a daemon")
    assert remote.workers == 0
    with pytest.raises(Exception, match="taskgui daemon --workers"):
        remote.set_workers(3)


# ---- on a thread of its own, woken by the change feed (runtime.follow_worker) ----

NEVER_MS = 600_000  # a safety poll that never comes within a test


class ThreadsSeen:
    """A store that notes the thread of every call made to it (and passes it on)."""

    def __init__(self, store: SqliteRepository) -> None:
        self._store = store
        self.threads: dict[str, set[int]] = {}

    def __getattr__(self, name: str) -> Any:
        found = getattr(self._store, name)
        if not callable(found):
            return found

        def noted(*args: Any, **kwargs: Any) -> Any:
            self.threads.setdefault(name, set()).add(threading.get_ident())
            return found(*args, **kwargs)

        return noted


def test_a_commit_elsewhere_is_seen_at_once_not_at_the_safety_poll(
    db: Path, repository: SqliteRepository, qtbot: QtBot, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(feed_watch, "FALLBACK_POLL_MS", NEVER_MS)  # only a wake can tell
    remote = RemoteScheduler(repository, CLOCK, owner=lambda: "a test", safety_ms=NEVER_MS)
    remote.start()
    writer = SqliteRepository(db)  # another connection, as the daemon's
    try:

        def named(snapshot: object) -> bool:
            return isinstance(snapshot, TaskSnapshot) and snapshot.spec.name == "news"

        with qtbot.waitSignal(remote.task_added, timeout=5_000, check_params_cb=named):
            writer.add_tasks([spec("news")], CLOCK.now())  # the file watcher wakes it
    finally:
        writer.close()
        remote.shutdown()


def test_the_gui_thread_never_reads_or_writes_the_store_while_following(
    db: Path, repository: SqliteRepository, qtbot: QtBot
) -> None:
    seen = ThreadsSeen(repository)
    with request_server(db):
        remote = RemoteScheduler(seen, CLOCK, safety_ms=200)
        remote.start()
        try:
            seen.threads.clear()  # the first read, before the window shows, is this one's
            with qtbot.waitSignal(remote.task_added, timeout=5_000) as added:
                remote.add_task(spec("from the window"))
            task = added.args[0]
            qtbot.waitUntil(lambda: remote.pending_requests == 0, timeout=5_000)
            remote.pause(task.id)  # a request, answered by the owner
            qtbot.waitUntil(lambda: remote.task(task.id).spec.paused, timeout=5_000)
            with qtbot.waitSignal(remote.history_read, timeout=5_000):
                assert remote.history(task.id) == []  # what was read so far: nothing yet
        finally:
            remote.shutdown()
    gui = threading.get_ident()
    assert {"changed", "task_changes", "add_tasks", "submit_request", "runs"} <= set(seen.threads)
    assert all(gui not in threads for threads in seen.threads.values()), seen.threads


def test_an_import_in_a_following_window_is_told_in_a_few_notices(
    db: Path, scheduler: subprocess.Popen[str], remote: RemoteScheduler, qtbot: QtBot
) -> None:
    """A review: the window filed one request per imported task (2,500 of them, each
    asked for its answer at every look)."""
    remote.start()
    errors: list[str] = []
    remote.error_occurred.connect(errors.append)
    remote.add_tasks([spec(f"imported {index}") for index in range(2_500)])

    def notices() -> list[tuple[Any, ...]]:
        with sqlite3.connect(db) as connection:
            rows = connection.execute(
                "SELECT done_at IS NOT NULL, error FROM requests WHERE op = 'added'"
            ).fetchall()
        connection.close()
        return rows

    qtbot.waitUntil(
        lambda: len(notices()) == 3 and all(done for done, _ in notices()), timeout=20_000
    )
    assert [error for _, error in notices()] == [None, None, None]
    assert errors == []
