"""End to end: a SIGKILL of the daemon while a run waits in the pool's queue.

The daemon queues runs beyond its free workers (``QUEUE_PER_WORKER``), each committed
as dispatched but not started before any worker takes it. After a kill, such a run
must not be lost, nor counted as a failed attempt: it is recorded (interrupted, "before
this run started") and dispatched again, and it runs once in all.
"""

from __future__ import annotations

import os
import signal
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from taskgui.store.protocols import NEVER_STARTED_ERROR
from tests.e2e.test_daemon_cli import Taskgui, wait_for


@pytest.fixture
def taskgui(tmp_path: Path) -> Iterator[Taskgui]:
    app = Taskgui(tmp_path)
    yield app
    app.stop_all()


def _rows(db: Path, task_id: int) -> list[tuple[str | None, int | None, str | None]]:
    with sqlite3.connect(db) as connection:
        rows = connection.execute(
            "SELECT outcome, started_at, error FROM runs WHERE task_id = ? ORDER BY id",
            (task_id,),
        ).fetchall()
    connection.close()
    return [(outcome, started, error) for outcome, started, error in rows]


def _states(db: Path) -> set[str]:
    with sqlite3.connect(db) as connection:
        states = {state for (state,) in connection.execute("SELECT state FROM tasks")}
    connection.close()
    return states


def test_a_kill_with_a_run_queued_records_it_and_runs_it_again_once(taskgui: Taskgui) -> None:
    order = taskgui.tmp_path / "order"
    release = taskgui.tmp_path / "release"
    holder = taskgui.add(
        "holder",
        f"while [ ! -e {release} ]; do sleep 0.02; done; echo holder >> {order}",
        "--max-attempts",
        "3",
        "--retry-delay",
        "1s",
    )
    queued = taskgui.add("queued", f"echo queued >> {order}", "--max-attempts", "1")
    daemon = taskgui.start_daemon(workers=1)

    def waits_in_the_queue() -> bool:
        return [(o, s) for o, s, _ in _rows(taskgui.db, queued)] == [(None, None)]

    wait_for(waits_in_the_queue, timeout=60, what="the second run to be queued")
    os.kill(daemon.pid, signal.SIGKILL)
    daemon.wait(timeout=10)

    taskgui.start_daemon(workers=1)
    release.touch()
    wait_for(lambda: _states(taskgui.db) == {"succeeded"}, timeout=60, what="both to succeed")

    # Recorded, then run again: once in all, though it had no attempts to spare.
    rows = _rows(taskgui.db, queued)
    assert [(outcome, error) for outcome, _, error in rows] == [
        ("interrupted", NEVER_STARTED_ERROR),
        ("succeeded", None),
    ]
    assert order.read_text().split().count("queued") == 1
    # The run that had started is an interrupted attempt, retried as before.
    assert [outcome for outcome, _, _ in _rows(taskgui.db, holder)] == ["interrupted", "succeeded"]
