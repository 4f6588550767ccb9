"""The live client of a schedule, for views: ``ScheduleClient`` and its signals.

``SchedulerService`` (the schedule runs in this process) and ``RemoteScheduler`` (it
runs in ``taskgui daemon``, followed through the store) both are one; the window, the
tray and the composition root know only this protocol, so nothing above the runtime
asks which it has (``runs_here`` says what a person may need to be told).
"""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import SignalInstance

from taskgui.control.client import ScheduleClient
from taskgui.core.status import RunRecord, TaskSnapshot
from taskgui.core.task import TaskId


class ScheduleNews(Protocol):
    """A schedule's decisions as they are made, and its history: what the log and the
    notification relay follow (every ``LiveScheduleClient``, and a shared schedule
    node's ``LeaderNews``)."""

    @property
    def task_removed(self) -> SignalInstance: ...
    @property
    def run_finished(self) -> SignalInstance: ...
    @property
    def retry_scheduled(self) -> SignalInstance: ...
    @property
    def task_exhausted(self) -> SignalInstance: ...

    def history(self, task_id: TaskId, limit: int = 100) -> list[RunRecord]: ...


class LiveScheduleClient(ScheduleClient, ScheduleNews, Protocol):
    """A ``ScheduleClient`` a view follows; the signals are ``ScheduleSignals``'."""

    @property
    def task_added(self) -> SignalInstance: ...
    @property
    def task_changed(self) -> SignalInstance: ...
    @property
    def tasks_loaded(self) -> SignalInstance: ...
    @property
    def run_started(self) -> SignalInstance: ...
    @property
    def run_output(self) -> SignalInstance: ...
    @property
    def occurrences_skipped(self) -> SignalInstance: ...
    @property
    def error_occurred(self) -> SignalInstance: ...
    @property
    def store_lost(self) -> SignalInstance: ...
    @property
    def owner_changed(self) -> SignalInstance: ...
    @property
    def store_unreachable(self) -> SignalInstance: ...
    @property
    def store_reachable(self) -> SignalInstance: ...
    @property
    def stopped(self) -> SignalInstance: ...
    @property
    def history_read(self) -> SignalInstance: ...
    @property
    def tasks_stored(self) -> SignalInstance: ...

    def start(self) -> object:
        """Start running the schedule, or following it. Raises StoreError."""
        ...

    def shutdown(self, grace: float = ..., reason: str = ...) -> None:
        """Stop (running it, or following it); ``stopped`` when done."""
        ...

    def snapshot(self) -> list[TaskSnapshot]:
        """Every task now: where a view starts before following the signals."""
        ...

    def first_snapshot(self) -> list[TaskSnapshot]:
        """The tasks at hand now, for a view to show at once: every other one follows
        in ``tasks_loaded`` batches (all of them, when they are all at hand)."""
        ...

    def history(self, task_id: TaskId, limit: int = 100) -> list[RunRecord]: ...

    def last_runs(self) -> dict[TaskId, RunRecord]: ...

    @property
    def workers(self) -> int:
        """The worker pool's size; 0 when it is not known here (another process's)."""
        ...

    @property
    def busy_workers(self) -> int: ...

    def set_workers(self, count: int) -> None:
        """TaskguiError where the pool is another process's."""
        ...

    def running_task_names(self) -> list[str]: ...
