"""Commands left running by a dead scheduler are stopped; strangers never are."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from taskgui.core.states import RunOutcome, SlotKind
from taskgui.runtime.orphans import is_orphan_of, stop_orphaned_runs
from taskgui.store.repository import RunRecord

T = datetime(2026, 1, 1, tzinfo=UTC)


def _run(task_id: int, pid: int | None) -> RunRecord:
    return RunRecord(
        id=1,
        task_id=task_id,
        attempt=1,
        kind=SlotKind.OCCURRENCE,
        scheduled_at=T,
        started_at=T,
        finished_at=T,
        outcome=RunOutcome.INTERRUPTED,
        pid=pid,
    )


@pytest.fixture
def group() -> Iterator[subprocess.Popen[bytes]]:
    """A command in its own process group, marked as task 7's, with a child of its own."""
    process = subprocess.Popen(
        ["/bin/sh", "-c", "sleep 60 & wait"],
        start_new_session=True,
        env={**os.environ, "TASKGUI_TASK_ID": "7"},
    )
    yield process
    if process.poll() is None:
        os.killpg(process.pid, 9)
    process.wait(timeout=10)


def test_an_orphaned_group_of_our_task_is_stopped(group: subprocess.Popen[bytes]) -> None:
    run = _run(7, group.pid)
    assert is_orphan_of(run)
    assert stop_orphaned_runs([run], grace=2.0) == [run]
    assert group.wait(timeout=5) is not None
    assert not is_orphan_of(run)


def test_a_reused_pid_of_another_task_or_program_is_left_alone(
    group: subprocess.Popen[bytes],
) -> None:
    assert stop_orphaned_runs([_run(8, group.pid), _run(7, None)], grace=0.1) == []
    assert group.poll() is None


@pytest.fixture
def marked_group(tmp_path: Path) -> Iterator[tuple[subprocess.Popen[bytes], str]]:
    """A command carrying the markers of task 7 and of a database, as taskgui sets them."""
    database = str(tmp_path / "taskgui.sqlite3")
    process = subprocess.Popen(
        ["/bin/sh", "-c", "sleep 60 & wait"],
        start_new_session=True,
        env={**os.environ, "TASKGUI_TASK_ID": "7", "TASKGUI_DB": database},
    )
    yield process, database
    if process.poll() is None:
        os.killpg(process.pid, 9)
    process.wait(timeout=10)


def test_a_run_without_a_recorded_pid_never_stops_processes_by_their_markers(
    marked_group: tuple[subprocess.Popen[bytes], str],
) -> None:
    """A task may leave processes running on purpose (setsid, nohup): same markers."""
    process, database = marked_group
    wait_for_marker(process.pid, database)

    assert stop_orphaned_runs([_run(7, None)], grace=0.1) == []
    assert process.poll() is None


def wait_for_marker(pid: int, database: str) -> None:
    """Until the process's environment is readable (it has exec'd the shell)."""
    marker = f"TASKGUI_DB={database}".encode()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        if marker in Path(f"/proc/{pid}/environ").read_bytes().split(b"\0"):
            return
        time.sleep(0.01)
    raise AssertionError("the command never showed its environment")
