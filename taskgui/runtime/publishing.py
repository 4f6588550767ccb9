"""What each engine event tells the views: one table, event type -> signal.

The service publishes every event it committed (or, once its file is lost, could not
commit); a view hears only through ``ScheduleSignals``. Events with no entry (a run
dispatched or withdrawn) are the store's business alone.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from taskgui.core.errors import UnreadableTaskError
from taskgui.core.events import (
    Event,
    OccurrencesSkipped,
    RetryScheduled,
    RunCancelRequested,
    RunFinished,
    TaskAdded,
    TaskChanged,
    TaskDropped,
    TaskExhausted,
    TaskRemoved,
)
from taskgui.core.status import RunId, RunResult
from taskgui.runtime.schedule_signals import ScheduleSignals

log = logging.getLogger("taskgui.runtime.service")

Results = Mapping[RunId, RunResult]
CancelRun = Callable[[RunId], object]
# (signals, the event, the results of the runs that ended with it, cancel a run)
_Handler = Callable[[ScheduleSignals, Any, Results, CancelRun], object]


def _run_finished(signals: ScheduleSignals, event: RunFinished, results: Results, _: Any) -> None:
    signals.run_finished.emit(event.run, event.outcome, results.get(event.run.run_id, RunResult()))


def _task_exhausted(
    signals: ScheduleSignals, event: TaskExhausted, results: Results, _: Any
) -> None:
    error = next(iter(results.values()), RunResult()).error or ""
    signals.task_exhausted.emit(event, error)


def _task_dropped(signals: ScheduleSignals, event: TaskDropped, _: Results, __: Any) -> None:
    message = (
        str(UnreadableTaskError(event.task_id, event.reason))
        if event.unreadable
        else f"task {event.task_id} was set aside (kept in the database, left "
        f"out of the schedule) because {event.reason}"
    )
    log.error("%s", message)
    signals.error_occurred.emit(message)
    signals.task_removed.emit(event.task_id)  # a view may show it: it is gone


PUBLISH: dict[type[Any], _Handler] = {
    TaskChanged: lambda signals, event, _, __: signals.task_changed.emit(event.task),
    TaskAdded: lambda signals, event, _, __: signals.task_added.emit(event.task),
    TaskRemoved: lambda signals, event, _, __: signals.task_removed.emit(event.task_id),
    RunFinished: _run_finished,
    RetryScheduled: lambda signals, event, _, __: signals.retry_scheduled.emit(event),
    TaskExhausted: _task_exhausted,
    OccurrencesSkipped: lambda signals, event, _, __: signals.occurrences_skipped.emit(event),
    RunCancelRequested: lambda _, event, __, cancel: cancel(event.run.run_id),
    TaskDropped: _task_dropped,
}


def publish(
    signals: ScheduleSignals,
    events: Sequence[Event],
    results: Results | None,
    cancel: CancelRun,
) -> None:
    """Tell the views about ``events``, in order; ``cancel`` stops a run's process."""
    results = results or {}
    for event in events:
        handler = PUBLISH.get(type(event))
        if handler is not None:
            handler(signals, event, results, cancel)
