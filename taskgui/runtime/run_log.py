"""Log lines for failed attempts and for tasks that give up.

``taskgui daemon`` has no window to show a failure in: its log is where a person looks
for what went wrong overnight. Each failed attempt is an INFO line (a retry may still
put it right); each task that exhausts its attempts is a WARNING. Both name the task by
id and name (``repr``, so a name cannot forge log lines or send terminal escapes), the
attempt, the exit status and the reason the runner gave.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable

from taskgui.core.events import Event, TaskExhausted
from taskgui.core.states import RunOutcome
from taskgui.core.status import RunResult, RunTicket, TaskSnapshot
from taskgui.core.task import TaskId
from taskgui.runtime.guard import never_raises
from taskgui.runtime.schedule_signals import ScheduleSignals

_VERB = {
    RunOutcome.FAILED: "failed",
    RunOutcome.TIMED_OUT: "timed out",
    RunOutcome.INTERRUPTED: "was interrupted",
}


class RunLog:
    """Writes the failures a schedule reports to ``log``.

    ``task_of`` gives the task's current snapshot (for its name and attempt limit) and
    may raise for a task deleted meanwhile; the line is written without them then.
    """

    def __init__(
        self,
        schedule: ScheduleSignals,
        task_of: Callable[[TaskId], TaskSnapshot],
        log: logging.Logger,
    ) -> None:
        self._task_of = task_of
        self._log = log
        # The last failed attempt of each task, for the line when it gives up.
        self._last_failure: dict[TaskId, RunResult] = {}
        schedule.run_finished.connect(self._on_schedule_run_finished)
        schedule.task_exhausted.connect(self._on_schedule_task_exhausted)

    def recovered(self, events: Iterable[Event]) -> None:
        """Log the tasks that gave up at start: their run was interrupted by the last
        process's end and they had no attempt left (no signal carries those)."""
        for event in events:
            if isinstance(event, TaskExhausted):
                self._on_schedule_task_exhausted(event, "taskgui stopped during the run")

    def _name(self, task_id: TaskId) -> tuple[str, int | None]:
        try:
            spec = self._task_of(task_id).spec
        except Exception:  # deleted meanwhile, or the store cannot say
            return "(deleted)", None
        return repr(spec.name), spec.max_attempts

    @never_raises("logging the end of a run")
    def _on_schedule_run_finished(
        self, ticket: RunTicket, outcome: RunOutcome, result: RunResult
    ) -> None:
        if not outcome.is_failure:
            self._last_failure.pop(ticket.task_id, None)
            return
        self._last_failure[ticket.task_id] = result
        name, limit = self._name(ticket.task_id)
        of = f" of {limit}" if limit is not None else ""
        self._log.info(
            "task %d %s: attempt %d%s %s (exit %s): %s",
            ticket.task_id,
            name,
            ticket.attempt,
            of,
            _VERB.get(outcome, outcome.value),
            _exit_text(result.exit_code),
            result.error or outcome.value,
        )

    @never_raises("logging that a task gave up")
    def _on_schedule_task_exhausted(self, event: TaskExhausted, error: str) -> None:
        last = self._last_failure.pop(event.task_id, RunResult(error=error or None))
        self._log.warning(
            "task %d %r gave up after %d attempt%s; the last %s (exit %s): %s",
            event.task_id,
            event.name,
            event.attempts,
            "" if event.attempts == 1 else "s",
            _VERB.get(event.outcome, event.outcome.value),
            _exit_text(last.exit_code),
            last.error or error or event.outcome.value,
        )


def _exit_text(code: int | None) -> str:
    return "none" if code is None else str(code)
