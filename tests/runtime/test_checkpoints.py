"""WAL checkpoints run on a thread of their own, however busy the schedule is.

The service used to checkpoint on its own thread only when the next deadline was at
least 50 ms away; a schedule that always has something due sooner never checkpointed
at all (the WAL grew, and the one checkpoint that finally ran stalled the schedule).
Here a FakeClock that never moves keeps a deadline 10 ms away for ever, and the
database file must still receive what the WAL holds.
"""

from __future__ import annotations

import logging
import threading
from datetime import timedelta
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from taskgui.core.clock import FakeClock
from taskgui.core.task import Command, TaskSpec
from taskgui.runtime.checkpoints import BackgroundCheckpoints
from taskgui.runtime.service import SchedulerService
from taskgui.store.errors import StoreError
from taskgui.store.sqlite.repository import SqliteRepository


def test_the_wal_is_folded_back_while_a_deadline_is_always_near(
    tmp_path: Path, qtbot: QtBot
) -> None:
    clock = FakeClock()
    path = tmp_path / "busy.sqlite3"
    repository = SqliteRepository(path)
    service = SchedulerService(repository, clock, workers=1)
    service.start()
    try:
        near = clock.now() + timedelta(milliseconds=10)
        service.add_task(TaskSpec(name="near", command=Command(line="true"), first_run_at=near))
        size = path.stat().st_size
        later = clock.now() + timedelta(days=1)
        service.add_tasks(
            [
                TaskSpec(name=f"later {index}", command=Command(line="true"), first_run_at=later)
                for index in range(300)
            ]
        )
        # Committed to the WAL; only a checkpoint puts it into the database file.
        qtbot.waitUntil(lambda: path.stat().st_size > size, timeout=10_000)
    finally:
        with qtbot.waitSignal(service.stopped, timeout=10_000):
            service.shutdown(grace=0.0)
        repository.close()


class Flaky:
    """A checkpointer that fails ``failures`` times, then works; counts its calls."""

    def __init__(self, failures: int) -> None:
        self.failures = failures
        self.calls = 0
        self.closed = threading.Event()
        self.worked = threading.Event()

    def checkpoint(self) -> tuple[int, int]:
        self.calls += 1
        if self.calls <= self.failures:
            raise StoreError("the disk is full", Path("x"))
        self.worked.set()
        return 0, 0

    def close(self) -> None:
        self.closed.set()


def test_a_failing_checkpoint_is_logged_once_and_tried_again(
    caplog: pytest.LogCaptureFixture,
) -> None:
    flaky = Flaky(failures=3)
    checkpoints = BackgroundCheckpoints(lambda: flaky, every=0.01)
    with caplog.at_level(logging.WARNING, logger="taskgui.runtime.checkpoints"):
        checkpoints.start()
        assert flaky.worked.wait(10)
        checkpoints.stop()
    assert flaky.closed.is_set()  # its connection is closed when the thread ends
    assert checkpoints.done >= 1
    failed = [r for r in caplog.records if "WAL checkpoint failed" in r.getMessage()]
    assert len(failed) == 1 and "the disk is full" in failed[0].getMessage()


def test_the_interval_must_be_positive() -> None:
    with pytest.raises(ValueError, match="positive"):
        BackgroundCheckpoints(lambda: Flaky(0), every=0)
