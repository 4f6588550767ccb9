"""The repository contract: what the scheduler needs from storage, and nothing more.

Two implementations keep each other honest: ``SqliteRepository`` (the real one) and
``MemoryRepository`` (for fast tests of the layers above), and one contract test suite
runs against both. The protocol is also the seam for a shared database server later.

The scheduler writes through ``apply``: it hands over the engine's events, and the
repository persists them in one transaction *before* the scheduler acts on them
(commit before acting): a dispatched run is on disk before its process starts, and a
run's result is on disk before its task is queued again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol

from taskgui.core.events import Event
from taskgui.core.states import TaskState
from taskgui.core.status import RunId, RunRecord, RunResult, TaskSnapshot
from taskgui.core.task import TaskId, TaskSpec

DEFAULT_HISTORY_LIMIT = 100
OUTPUT_CAP_BYTES = 64 * 1024
INTERRUPTED_ERROR = "taskgui stopped while this ran; it will be retried"


@dataclass(frozen=True, slots=True)
class QuarantinedTask:
    """A stored task that could not be decoded; kept on disk, left out of the schedule."""

    task_id: TaskId
    error: str


@dataclass(frozen=True, slots=True)
class LoadResult:
    tasks: list[TaskSnapshot]
    quarantined: list[QuarantinedTask]


class TaskRepository(Protocol):
    """Storage of task definitions, their scheduling state and their run history."""

    history_limit: int

    def add_tasks(self, specs: Sequence[TaskSpec], now: datetime) -> list[TaskSpec]:
        """Store new tasks with their initial status in one transaction; return them
        with their ids. All or nothing."""
        ...

    def apply(
        self,
        events: Sequence[Event],
        now: datetime,
        results: Mapping[RunId, RunResult] | None = None,
    ) -> None:
        """Persist engine events in one transaction. ``TaskAdded`` is ignored (stored by
        ``add_tasks``); ``results`` carries what the runner saw of finished runs."""
        ...

    def load(self, now: datetime) -> LoadResult:
        """Every decodable task; rows that cannot be decoded are quarantined (at ``now``)."""
        ...

    def get(self, task_id: TaskId) -> TaskSnapshot:
        """One task; TaskNotFoundError when it does not exist."""
        ...

    def list_tasks(self, state: TaskState | None = None) -> list[TaskSnapshot]: ...

    def runs(self, task_id: TaskId, limit: int = DEFAULT_HISTORY_LIMIT) -> list[RunRecord]:
        """The task's runs, newest first."""
        ...

    def record_run_pid(self, run_id: RunId, pid: int) -> None:
        """Remember which process runs an open run (to stop it after a crash)."""
        ...

    def last_runs(self) -> dict[TaskId, RunRecord]:
        """Each task's most recent finished run (for a view's "last result" column)."""
        ...

    def interrupt_open_runs(self, now: datetime) -> list[RunRecord]:
        """Close every run a previous process left in progress as ``interrupted``."""
        ...

    def quarantined(self) -> list[QuarantinedTask]: ...

    def close(self) -> None: ...


def cap_output(text: str, limit: int = OUTPUT_CAP_BYTES) -> str:
    """Keep the tail of ``text`` within ``limit`` bytes of UTF-8: the end of a log is
    where the error is."""
    data = text.encode("utf-8", "replace")
    if len(data) <= limit:
        return text
    return "[... earlier output cut ...]\n" + data[-limit:].decode("utf-8", "ignore")


__all__ = ["RunRecord"]  # re-exported: it moved to core, where views can reach it
