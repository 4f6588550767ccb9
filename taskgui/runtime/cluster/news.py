"""What a shared schedule's leader decided, told as a single process tells it.

``taskgui daemon`` on a file follows its ``SchedulerService``'s signals with a
``RunLog`` (the log's lines for failed attempts and tasks that give up) and a
``NotifyRelay`` (webhook and mail, by each task's rule: streaks, quiet hours). On a
shared schedule the same decisions are the leading node's engine's: a run's end,
wherever it ran, reaches that engine, whose retry policy says "retry" or "gave up".
So the leader publishes every write it committed under its fencing token here, with
the result the running node recorded (exit status, error), and the same ``RunLog``
and relay follow it: the log lines and the notifications come from the node that
leads, once per decision, and only for what was committed (a fenced-off write tells
nothing; the next leader decides again and tells it).

The engine a new leader builds is not told: what it carries on was dispatched by the
leader before it, which told its own decisions.

Signals: those of ``ScheduleSignals`` that an engine's events move (``run_finished``,
``retry_scheduled``, ``task_exhausted``, ``task_changed``, ``task_removed``,
``occurrences_skipped``, ``error_occurred``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from PySide6.QtCore import QObject

from taskgui.core.events import Event
from taskgui.core.status import RunId, RunRecord, RunResult
from taskgui.core.task import TaskId
from taskgui.runtime.publishing import publish
from taskgui.runtime.schedule_signals import ScheduleSignals
from taskgui.store.protocols import TaskRepository


class LeaderNews(ScheduleSignals):
    """See the module docstring; ``history`` is the store's, for a relay's streaks."""

    def __init__(self, repository: TaskRepository, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._repository = repository

    def committed(self, events: Sequence[Event], results: Mapping[RunId, RunResult]) -> None:
        """The leader committed ``events``; ``results``: what the runs that ended
        recorded. A stop the engine asks for is the running node's to make (it hears
        of a cancel from the store), so nothing is cancelled from here."""
        publish(self, events, results, lambda _run: None)

    def history(self, task_id: TaskId, limit: int = 100) -> list[RunRecord]:
        return self._repository.runs(task_id, limit)
