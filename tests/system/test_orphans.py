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
from taskgui.store.protocols import RunRecord
from taskgui.system.orphans import is_orphan_of, stop_orphaned_runs
from taskgui.system.process_tree import RUN_MARK, run_mark

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


def _marked(run: RunRecord, database: str) -> dict[str, str]:
    """The environment the scheduler gives ``run``'s command (its own run mark)."""
    mark = run_mark(database, run.task_id, run.kind.value, run.scheduled_at, run.attempt)
    return {**os.environ, "TASKGUI_TASK_ID": str(run.task_id), RUN_MARK: mark}


def test_a_run_whose_pid_was_never_recorded_is_found_by_its_own_mark(tmp_path: Path) -> None:
    # The scheduler died between starting the command and committing its pid.
    database = str(tmp_path / "taskgui.sqlite3")
    run = _run(7, None)
    process = subprocess.Popen(
        ["/bin/sh", "-c", "sleep 60 & wait"], start_new_session=True, env=_marked(run, database)
    )
    try:
        assert stop_orphaned_runs([run], database=database, grace=2.0) == [run]
        assert process.wait(timeout=5) is not None
    finally:
        if process.poll() is None:
            os.killpg(process.pid, 9)
            process.wait(timeout=10)


def test_a_process_that_left_the_group_is_stopped_with_it(tmp_path: Path) -> None:
    database = str(tmp_path / "taskgui.sqlite3")
    pid_file = tmp_path / "escaped.pid"
    group = subprocess.Popen(
        ["/bin/sh", "-c", f"setsid sh -c 'echo $$ > {pid_file}; exec sleep 60' & sleep 60"],
        start_new_session=True,
        env=_marked(_run(7, None), database),
    )
    try:
        deadline = time.monotonic() + 10
        while not (pid_file.exists() and pid_file.read_text().strip()):
            assert time.monotonic() < deadline, "the escapee never started"
            time.sleep(0.02)
        escaped = int(pid_file.read_text())
        run = _run(7, group.pid)

        assert stop_orphaned_runs([run], database=database, grace=2.0) == [run]

        assert group.wait(timeout=5) is not None
        deadline = time.monotonic() + 5
        while Path(f"/proc/{escaped}").exists() and "Z" not in _state(escaped):
            assert time.monotonic() < deadline, "the process that left the group survived"
            time.sleep(0.02)
    finally:
        if group.poll() is None:
            os.killpg(group.pid, 9)
            group.wait(timeout=10)


def test_another_schedules_run_with_the_same_record_is_left_alone(tmp_path: Path) -> None:
    run = _run(7, None)
    process = subprocess.Popen(
        ["/bin/sh", "-c", "sleep 60 & wait"],
        start_new_session=True,
        env=_marked(run, str(tmp_path / "other.sqlite3")),
    )
    try:
        assert stop_orphaned_runs([run], database=str(tmp_path / "mine.sqlite3")) == []
        assert process.poll() is None
    finally:
        os.killpg(process.pid, 9)
        process.wait(timeout=10)


def _state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except OSError:
        return "gone"
