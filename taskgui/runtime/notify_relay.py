"""Turns what a schedule reports into notifications, by each task's rule.

The relay follows a schedule's signals (as ``RunLog`` does, so the service itself
knows nothing of notifications), keeps the streaks and snoozes in a ``NotifyGate``
and, for each finished attempt the rule says is news, hands a ``Notification`` to
every sink: the desktop's notifier in the window, the dispatcher of the outside
channels (webhook, e-mail) in the window and in ``taskgui daemon`` alike.

A failed attempt is judged when the schedule says what follows it: ``retry_scheduled``
(it will run again) or ``task_exhausted`` (it gave up). Both come right after
``run_finished`` from the same engine call, in that order.

The sinks run on the thread the signals arrive on; each must only queue (the
dispatcher does), never wait on the network.
"""

from __future__ import annotations

import logging
import socket
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from PySide6.QtCore import SignalInstance

from taskgui.core.clock import Clock
from taskgui.core.events import RetryScheduled, TaskExhausted
from taskgui.core.notify_rules import DEFAULT_RULE, NotifyGate, NotifyRule
from taskgui.core.states import RunOutcome
from taskgui.core.status import RunResult, RunTicket, TaskSnapshot
from taskgui.core.task import TaskId
from taskgui.runtime.schedule_client import LiveScheduleClient
from taskgui.system.notify.message import Message

log = logging.getLogger(__name__)

SNOOZE = timedelta(hours=1)


@dataclass(frozen=True, slots=True)
class Notification:
    """One piece of news: the message, and the engine event it answers (if any)."""

    message: Message
    event: RetryScheduled | TaskExhausted | None = None


Sink = Callable[[Notification], None]


@dataclass
class _Failure:
    outcome: RunOutcome
    attempt: int
    error: str


class NotifyRelay:
    """See the module docstring. ``default_rule`` is asked each time (settings change)."""

    def __init__(
        self,
        schedule: LiveScheduleClient,
        task_of: Callable[[TaskId], TaskSnapshot],
        clock: Clock,
        *,
        default_rule: Callable[[], NotifyRule] = lambda: DEFAULT_RULE,
        gate: NotifyGate | None = None,
        host: str | None = None,
    ) -> None:
        self._task_of = task_of
        self._clock = clock
        self._default_rule = default_rule
        self.gate = gate or NotifyGate()
        self.host = socket.gethostname() if host is None else host
        self.sinks: list[Sink] = []
        self._failures: dict[TaskId, _Failure] = {}
        self._schedule: LiveScheduleClient | None = None
        self.follow(schedule)

    def follow(self, schedule: LiveScheduleClient) -> None:
        """Listen to ``schedule`` from now on (the window adopted another one)."""
        old = self._schedule
        if old is not None:
            for signal, slot in self._links(old):
                signal.disconnect(slot)
        self._schedule = schedule
        for signal, slot in self._links(schedule):
            signal.connect(slot)

    def close(self) -> None:
        if self._schedule is not None:
            for signal, slot in self._links(self._schedule):
                signal.disconnect(slot)
            self._schedule = None

    def _links(
        self, schedule: LiveScheduleClient
    ) -> list[tuple[SignalInstance, Callable[..., None]]]:
        return [
            (schedule.run_finished, self._on_schedule_run_finished),
            (schedule.retry_scheduled, self._on_schedule_retry_scheduled),
            (schedule.task_exhausted, self._on_schedule_task_exhausted),
            (schedule.task_removed, self._on_schedule_task_removed),
        ]

    def set_task_of(self, task_of: Callable[[TaskId], TaskSnapshot]) -> None:
        self._task_of = task_of

    def snooze(self, task_id: TaskId, length: timedelta = SNOOZE) -> None:
        """Hold back this task's notifications for ``length`` (Snooze 1 h)."""
        self.gate.snooze(task_id, self._clock.now() + length)

    # ------------------------------------------------------------------ slots

    def _on_schedule_run_finished(
        self, ticket: RunTicket, outcome: RunOutcome, result: RunResult
    ) -> None:
        try:
            if outcome.is_failure:
                self._failures[ticket.task_id] = _Failure(
                    outcome, ticket.attempt, result.error or outcome.value
                )
            elif outcome is RunOutcome.SUCCEEDED:
                self._failures.pop(ticket.task_id, None)
                self._judge(ticket.task_id, None, failed=False, gave_up=False)
        except Exception:
            log.exception("judging a finished run for notification failed")

    def _on_schedule_retry_scheduled(self, event: RetryScheduled) -> None:
        try:
            self._judge(event.task_id, event, failed=True, gave_up=False)
        except Exception:
            log.exception("judging a failed run for notification failed")

    def _on_schedule_task_exhausted(self, event: TaskExhausted, error: str) -> None:
        try:
            if error and event.task_id not in self._failures:
                self._failures[event.task_id] = _Failure(event.outcome, event.attempts, error)
            self._judge(event.task_id, event, failed=True, gave_up=True)
        except Exception:
            log.exception("judging a task that gave up for notification failed")

    def _on_schedule_task_removed(self, task_id: int) -> None:
        self._failures.pop(task_id, None)
        self.gate.forget(task_id)

    # --------------------------------------------------------------- judging

    def _judge(
        self,
        task_id: TaskId,
        event: RetryScheduled | TaskExhausted | None,
        *,
        failed: bool,
        gave_up: bool,
    ) -> None:
        try:
            spec = self._task_of(task_id).spec
        except Exception:  # deleted meanwhile: nobody to tell about it
            return
        rule = spec.notify or self._default_rule()
        now = self._clock.now()
        trigger = self.gate.attempt_finished(
            task_id, rule, failed=failed, gave_up=gave_up, now=now, local=now.astimezone().time()
        )
        failure = self._failures.pop(task_id, None) if failed else None
        if trigger is None:
            return
        message = Message(
            trigger=trigger,
            task_id=task_id,
            task_name=spec.name,
            at=now,
            outcome=failure.outcome.value if failure else "",
            attempt=(
                event.attempts
                if isinstance(event, TaskExhausted)
                else failure.attempt
                if failure
                else 0
            ),
            max_attempts=spec.max_attempts,
            error=failure.error if failure else "",
            host=self.host,
        )
        notification = Notification(message, event)
        for sink in list(self.sinks):
            try:
                sink(notification)
            except Exception:
                log.exception("a notification sink failed")
