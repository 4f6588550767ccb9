"""A run's recorded duration comes from the monotonic clock, whatever the wall clock does.

A real command runs while the wall clock jumps by three hours (forward: a correction,
a resume; backward: a person setting the time); the run's history record must still
span the few hundred milliseconds it really took, not 3 h or -3 h.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from taskgui.core.retry import RetryPolicy
from taskgui.core.states import RunOutcome, TaskState
from taskgui.core.task import Command, TaskSpec
from taskgui.runtime.service import SchedulerService
from taskgui.store.sqlite.repository import SqliteRepository


class JumpingClock:
    """The system's clocks, but the wall clock can be set off by a jump at will."""

    def __init__(self) -> None:
        self.offset = timedelta(0)

    def now(self) -> datetime:
        return datetime.now(UTC) + self.offset

    def monotonic(self) -> float:
        return time.monotonic()


@pytest.mark.parametrize("jump", [timedelta(hours=3), timedelta(hours=-3)])
def test_a_run_across_a_wall_clock_jump_keeps_its_real_duration(
    tmp_path: Path, qtbot: QtBot, jump: timedelta
) -> None:
    clock = JumpingClock()
    repository = SqliteRepository(tmp_path / "jump.sqlite3")
    service = SchedulerService(repository, clock, workers=1, kill_grace=0.3)
    service.start()
    gate = tmp_path / "gate"
    try:
        task = service.add_task(
            TaskSpec(
                name="across the jump",
                command=Command(line=f"while [ ! -e {gate} ]; do sleep 0.01; done"),
                first_run_at=clock.now(),
                retry=RetryPolicy.no_retry(),
            )
        )
        qtbot.waitUntil(lambda: service.task(task.id).state is TaskState.RUNNING, timeout=10_000)
        began = time.monotonic()
        clock.offset = jump
        gate.touch()
        with qtbot.waitSignal(service.run_finished, timeout=10_000) as finished:
            pass
        ended = time.monotonic()
        assert finished.args[1] is RunOutcome.SUCCEEDED
        (run,) = service.history(task.id)
        assert run.started_at is not None and run.finished_at is not None
        recorded = (run.finished_at - run.started_at).total_seconds()
        # It ran from before the jump until the gate opened, and not much longer.
        assert 0 < recorded < (ended - began) + 5
    finally:
        with qtbot.waitSignal(service.stopped, timeout=10_000):
            service.shutdown(grace=0.0)
        service.pool.wait_for_done(5_000)
        repository.close()
