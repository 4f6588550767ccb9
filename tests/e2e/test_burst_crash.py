"""End to end: a SIGKILL of the daemon in the middle of a burst of due runs.

The group commit writes many runs' starts, pids and results in one transaction per
wake-up. What it must not weaken (the delivery guarantee): every run is on disk as
started before its process starts, and its result before its task is queued again.
So after a kill in the middle of 120 runs due at once and a restart, nothing is
lost (every task succeeds exactly once), and nothing ran more often than the runs
recorded for it: each execution is one recorded attempt (the command writes its
task and attempt), the extra ones only those the kill left in flight (interrupted).
"""

from __future__ import annotations

import collections
import json
import os
import signal
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from taskgui.core.defaults import QUEUE_PER_WORKER
from tests.e2e.test_daemon_cli import Taskgui, wait_for

TASKS = 120


@pytest.fixture
def taskgui(tmp_path: Path) -> Iterator[Taskgui]:
    app = Taskgui(tmp_path)
    yield app
    app.stop_all()


def _export_file(path: Path, ran: Path) -> None:
    """TASKS one-off tasks all due in a moment, each appending "task attempt" to ``ran``."""
    due = (datetime.now(UTC) + timedelta(seconds=2)).isoformat()
    command = f'echo "$TASKGUI_TASK_ID $TASKGUI_ATTEMPT" >> {ran}; sleep 0.02'
    tasks: list[dict[str, object]] = [
        {
            "id": index + 1,
            "name": f"burst {index}",
            "state": "pending",
            "command": {"v": 1, "line": command, "shell": True, "cwd": None, "env": []},
            "first_run_at": due,
            "schedule": {"v": 1, "kind": "once"},
            "retry": {
                "v": 1,
                "backoff": "fixed",
                "max_attempts": 5,
                "base": 1.0,
                "max": 1.0,
                "factor": 1.0,
                "jitter": False,
            },
            "priority": 0,
            "timeout_seconds": None,
            "concurrency_key": None,
            "overlap": "skip",
            "misfire": "run_once",
            "misfire_grace_seconds": 3600.0,
            "paused": False,
        }
        for index in range(TASKS)
    ]
    document = {"format": "taskgui-export", "version": 1, "tasks": tasks}
    path.write_text(json.dumps(document))


def _executions(ran: Path) -> list[tuple[int, int]]:
    if not ran.exists():
        return []
    lines = ran.read_text().splitlines()
    return [(int(task), int(attempt)) for task, attempt in (line.split() for line in lines)]


@pytest.mark.slow
def test_a_sigkill_during_a_burst_loses_nothing_and_runs_nothing_twice(
    taskgui: Taskgui,
) -> None:
    ran = taskgui.tmp_path / "ran.txt"
    export = taskgui.tmp_path / "burst.json"
    _export_file(export, ran)
    imported = taskgui.cli("import", str(export), "--json")
    assert imported.returncode == 0, imported.stderr
    daemon = taskgui.start_daemon(workers=4)
    wait_for(lambda: len(_executions(ran)) >= TASKS // 3, timeout=60, what="a third to run")
    os.kill(daemon.pid, signal.SIGKILL)
    daemon.wait(timeout=10)
    at_kill = len(_executions(ran))
    assert at_kill < TASKS, "the burst ended before the kill: nothing was tested"

    taskgui.start_daemon(workers=4)
    with sqlite3.connect(taskgui.db) as connection:

        def all_succeeded() -> bool:
            row = connection.execute(
                "SELECT count(*) FROM tasks WHERE state = 'succeeded'"
            ).fetchone()
            return bool(row[0] == TASKS)

        wait_for(all_succeeded, timeout=120, what="every task to succeed")
        runs = connection.execute(
            "SELECT task_id, attempt, outcome FROM runs ORDER BY id"
        ).fetchall()
    connection.close()

    executions = _executions(ran)
    recorded = {(task, attempt) for task, attempt, _ in runs}
    outcomes = collections.Counter(outcome for _, _, outcome in runs)
    by_task = collections.Counter(task for task, _ in executions)
    interrupted = collections.Counter(task for task, _, outcome in runs if outcome == "interrupted")
    succeeded = collections.Counter(task for task, _, outcome in runs if outcome == "succeeded")
    # Nothing lost: each task succeeded, once.
    assert succeeded == dict.fromkeys(range(1, TASKS + 1), 1)
    # Durable before it started: every execution is a recorded attempt, each once.
    assert len(set(executions)) == len(executions), "an attempt ran twice"
    assert set(executions) <= recorded, "a process ran for a run that was never recorded"
    # Nothing twice beyond what was in flight: extra executions only of interrupted runs.
    for task, count in by_task.items():
        assert count <= 1 + interrupted[task], (task, count, interrupted[task])
    assert set(outcomes) <= {"succeeded", "interrupted"}, outcomes
    # At most one per worker was in flight, and one per worker queued for the next
    # (recorded as never started, and run again: QUEUE_PER_WORKER).
    assert outcomes["interrupted"] <= 4 * (1 + QUEUE_PER_WORKER)
