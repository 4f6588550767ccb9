"""Turns what a schedule reports into notifications, by each task's rule.

The relay follows a schedule's signals (as ``RunLog`` does, so the service itself
knows nothing of notifications), keeps the streaks and snoozes in a ``NotifyGate``
(a task's streak counted from its history at its first attempt judged here, so it
survives a restart) and, for each finished attempt the rule says is news, hands a
``Notification`` to every sink: the desktop's notifier in the window, the dispatcher
of the outside channels (webhook, e-mail) in the window and in ``taskgui daemon``
alike. News during quiet hours is kept and told as one summary when they end (a
timer for the end, and before the first news after it). ``after_held`` says when what
was held so far has been handed on: a shared schedule's leader keeps the outbox rows of
that news until then, so a node that stops during the quiet hours leaves it to the
next leader instead of losing it.

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
from datetime import datetime, timedelta

from PySide6.QtCore import QTimer, SignalInstance

from taskgui.core.clock import Clock
from taskgui.core.events import RetryScheduled, TaskExhausted
from taskgui.core.notify_rules import (
    DEFAULT_RULE,
    MAX_STREAK,
    NotifyGate,
    NotifyRule,
    NotifyWhen,
    Trigger,
    failure_streak,
)
from taskgui.core.states import RunOutcome
from taskgui.core.status import RunResult, RunTicket, TaskSnapshot
from taskgui.core.task import TaskId
from taskgui.runtime.schedule_client import ScheduleNews
from taskgui.system.notify.message import Message

log = logging.getLogger(__name__)

SNOOZE = timedelta(hours=1)
MAX_HELD = 1_000  # news kept through quiet hours; beyond it, only counted
QUIET_LOOK_S = 3_600.0  # the longest the end of the quiet hours is waited for at once
# The rules that look at the streak: only for them is a task's history read (once).
STREAK_RULES = (NotifyWhen.AFTER, NotifyWhen.RECOVERY)


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
        schedule: ScheduleNews,
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
        # What quiet hours held back, told as one summary when they end.
        self._held: list[Message] = []
        self._held_dropped = 0
        self._after_held: list[Callable[[], None]] = []  # called once the held news went
        self._held_since_asked = False  # news held since after_held was last called
        self._quiet_end = QTimer()
        self._quiet_end.setSingleShot(True)
        self._quiet_end.timeout.connect(self._on_quiet_end_timeout)
        self._schedule: ScheduleNews | None = None
        self.follow(schedule)

    def follow(self, schedule: ScheduleNews) -> None:
        """Listen to ``schedule`` from now on (the window adopted another one)."""
        old = self._schedule
        if old is not None:
            for signal, slot in self._links(old):
                signal.disconnect(slot)
        self._schedule = schedule
        for signal, slot in self._links(schedule):
            signal.connect(slot)

    def close(self) -> None:
        """Stop following. What quiet hours still hold is not sent, and ``after_held``'s
        callbacks waiting for it are not called: their news was not handed on."""
        self._quiet_end.stop()
        self._after_held = []
        self._held_since_asked = False
        if self._schedule is not None:
            for signal, slot in self._links(self._schedule):
                signal.disconnect(slot)
            self._schedule = None

    def _links(self, schedule: ScheduleNews) -> list[tuple[SignalInstance, Callable[..., None]]]:
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

    def _seed_streak(self, task_id: TaskId, rule: NotifyRule) -> None:
        """The first attempt judged here: count the failures before it from history.

        The attempt being judged is committed before its signal comes, so it is the
        newest finished run, and is left out. A history that cannot be read seeds
        nothing: the count then starts here, as it did before streaks were kept.
        """
        if self._schedule is None:
            return
        needed = rule.count if rule.when is NotifyWhen.AFTER else 1
        try:
            runs = self._schedule.history(task_id, min(2 * needed + 20, 3 * MAX_STREAK))
        except Exception:
            log.warning("the history of task %s could not be read for its streak", task_id)
            return
        finished = [run.outcome for run in runs if run.outcome not in (None, RunOutcome.MISSED)]
        self.gate.seed(task_id, failure_streak(finished[1:]))

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
        if rule.when in STREAK_RULES and not self.gate.knows(task_id):
            self._seed_streak(task_id, rule)
        now = self._clock.now()
        local = now.astimezone()
        trigger = self.gate.attempt_finished(
            task_id, rule, failed=failed, gave_up=gave_up, now=now, local=local.time(),
            quiet_drops=False,
        )  # fmt: skip
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
        if self.gate.in_quiet_hours(local.time()):
            self._hold(message, local)
            return
        self._flush_held()  # quiet hours are over: what they held comes first
        self._deliver(Notification(message, event))

    # ----------------------------------------------------------- quiet hours

    def after_held(self, passed: Callable[[], None]) -> bool:
        """Call ``passed`` once the news the quiet hours took since the last call was
        handed to the sinks, at once when they took none: what came between (a success,
        a failure the rule does not tell) is not kept waiting for a summary it is not in.
        Whether it waits for the quiet hours to end."""
        if self._held_since_asked:
            self._held_since_asked = False
            self._after_held.append(passed)
            return True
        passed()
        return False

    def _hold(self, message: Message, local: datetime) -> None:
        """Keep the news for the summary at the end of the quiet hours."""
        self._held_since_asked = True
        if len(self._held) < MAX_HELD:
            self._held.append(message)
        else:
            self._held_dropped += 1
        quiet = self.gate.quiet
        assert quiet is not None
        wait = (quiet.ends_after(local) - local).total_seconds()
        if not self._quiet_end.isActive():
            # Capped: a timer is not trusted across a sleep; an early look re-arms.
            self._quiet_end.start(int(min(wait, QUIET_LOOK_S) * 1000) + 50)

    def _on_quiet_end_timeout(self) -> None:
        try:
            local = self._clock.now().astimezone()
            if self.gate.in_quiet_hours(local.time()):
                quiet = self.gate.quiet
                assert quiet is not None
                wait = (quiet.ends_after(local) - local).total_seconds()
                self._quiet_end.start(int(min(wait, QUIET_LOOK_S) * 1000) + 50)
                return
            self._flush_held()
        except Exception:
            log.exception("sending what the quiet hours held failed")

    def _flush_held(self) -> None:
        """One summary of what the quiet hours held (one piece of news: itself)."""
        held, dropped = self._held, self._held_dropped
        if not held:
            return
        self._held, self._held_dropped = [], 0
        self._quiet_end.stop()
        waiting, self._after_held = self._after_held, []
        if len(held) == 1 and not dropped:
            self._deliver(Notification(held[0]))
        else:
            self._deliver(Notification(self._summary(held, dropped)))
        for passed in waiting:
            try:
                passed()
            except Exception:
                log.exception("a callback after the held news failed")

    def _summary(self, held: list[Message], dropped: int) -> Message:
        titles = tuple(message.title for message in held)
        if dropped:
            titles += (f"{dropped} more",)
        return Message(
            trigger=Trigger.HELD,
            task_id=0,
            task_name="",
            at=self._clock.now(),
            host=self.host,
            held=titles,
        )

    def _deliver(self, notification: Notification) -> None:
        for sink in list(self.sinks):
            try:
                sink(notification)
            except Exception:
                log.exception("a notification sink failed")
