"""A scheduler service on a real database file, for tests with real threads and
processes (``tests/runtime``): builds it, records what finished, shuts it down."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytestqt.qtbot import QtBot

from taskgui.core.clock import SystemClock
from taskgui.core.retry import RetryPolicy
from taskgui.core.states import RunOutcome, TaskState
from taskgui.core.task import Command, TaskSpec
from taskgui.runtime.live_output import OUTPUT_SAVE_MS
from taskgui.runtime.service import DISPATCH_AHEAD, SchedulerService
from taskgui.store.sqlite.repository import SqliteRepository

CLOCK = SystemClock()


def spec(name: str, line: str, **overrides: Any) -> TaskSpec:
    """A one-off shell task due now, without retries, unless told otherwise."""
    fields: dict[str, Any] = {
        "name": name,
        "command": Command(line=line),
        "first_run_at": CLOCK.now(),
        "retry": RetryPolicy.no_retry(),
    }
    fields.update(overrides)
    return TaskSpec(**fields)


class Harness:
    """A started ``SchedulerService`` over ``tmp_path``; ``close`` stops it if needed."""

    def __init__(
        self,
        tmp_path: Path,
        qtbot: QtBot,
        workers: int,
        *,
        dispatch_ahead: float = DISPATCH_AHEAD,
        output_save_ms: int = OUTPUT_SAVE_MS,
        queue_per_worker: int = 0,
    ) -> None:
        self.tmp_path = tmp_path
        self.qtbot = qtbot
        self.repository = SqliteRepository(tmp_path / "service.sqlite3")
        self.service = SchedulerService(
            self.repository,
            CLOCK,
            workers=workers,
            kill_grace=0.3,
            dispatch_ahead=dispatch_ahead,
            output_save_ms=output_save_ms,
            queue_per_worker=queue_per_worker,
        )
        self.finished: list[tuple[Any, RunOutcome, Any]] = []
        self.stopped = False
        self.service.run_finished.connect(
            lambda ticket, outcome, result: self.finished.append((ticket, outcome, result))
        )
        self.service.stopped.connect(self._on_stopped)
        self.service.start()

    def _on_stopped(self) -> None:
        self.stopped = True

    def state(self, task_id: int) -> TaskState:
        return self.service.task(task_id).state

    def wait_state(self, task_id: int, state: TaskState, timeout: int = 10_000) -> None:
        self.qtbot.waitUntil(lambda: self.state(task_id) is state, timeout=timeout)

    def close(self) -> None:
        if not self.stopped:
            with self.qtbot.waitSignal(self.service.stopped, timeout=10_000):
                self.service.shutdown(grace=0.0)
        self.service.pool.wait_for_done(5_000)
        self.repository.close()
