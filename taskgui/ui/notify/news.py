"""What the window does with the relay's notifications and the actions on them.

``NotifyRelay`` (runtime) decides, by each task's rule, what is news. Here each piece
of news becomes a desktop notice with the wording the window always had ("failed,
will retry", "Gave up after 3 attempts") and, where this process runs the schedule,
goes to the outside channels too (webhook, e-mail; a window that follows
``taskgui daemon`` leaves those to it, or they would arrive twice). The actions a
desktop notification offers come back here: Retry Now asks the schedule, Open Log
opens the task's history, Snooze 1 h tells the relay to hold the task's news back.

Signals:
    log_requested(int): open the history of this task id.
    problem_occurred(str): something a person should read (Retry Now was refused).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

from PySide6.QtCore import QObject, Signal

from taskgui.core.errors import TaskguiError
from taskgui.core.events import RetryScheduled, TaskExhausted
from taskgui.core.notify_rules import Trigger
from taskgui.core.status import TaskSnapshot
from taskgui.core.task import TaskId
from taskgui.runtime.guard import never_raises
from taskgui.runtime.notify_relay import Notification, NotifyRelay
from taskgui.runtime.schedule_client import LiveScheduleClient
from taskgui.system.notify.dispatcher import Dispatcher
from taskgui.ui.notify.notifier import (
    Notice,
    NoticeKind,
    Notifier,
    notice_for_exhausted,
    notice_for_retry,
)
from taskgui.ui.plain_text import shown

_KINDS = {Trigger.FAILING: NoticeKind.FAILING, Trigger.RECOVERED: NoticeKind.RECOVERED}


def notice_for(notification: Notification, recurring: bool = False) -> Notice:
    """The desktop notice for one piece of news."""
    message, event = notification.message, notification.event
    if isinstance(event, RetryScheduled) and message.trigger is Trigger.FAILED:
        return notice_for_retry(event, message.task_name, message.error)
    if isinstance(event, TaskExhausted) and message.trigger is Trigger.GAVE_UP:
        return notice_for_exhausted(event, message.error, recurring)
    return Notice(
        kind=_KINDS.get(message.trigger, NoticeKind.RETRYING),
        title=shown(message.title),  # built from the name and the error, as written
        message=shown(message.text),
        task_id=message.task_id,
    )


class News(QObject):
    """Routes the relay's news to the notifier and the outside channels; see above."""

    log_requested = Signal(int)
    problem_occurred = Signal(str)

    def __init__(
        self,
        relay: NotifyRelay,
        notifier: Notifier,
        *,
        retry_now: Callable[[TaskId], None],
        recurring: Callable[[TaskId], bool],
        outside: Dispatcher | None = None,
        runs_here: bool = True,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.relay = relay
        self.notifier = notifier
        self.outside = outside
        self.runs_here = runs_here
        self._retry_now = retry_now
        self._recurring = recurring
        relay.sinks.append(self._on_relay_notified)
        notifier.action_requested.connect(self._on_notifier_action_requested)

    def adopt(
        self,
        schedule: LiveScheduleClient,
        *,
        task_of: Callable[[TaskId], TaskSnapshot],
        retry_now: Callable[[TaskId], None],
        recurring: Callable[[TaskId], bool],
        runs_here: bool,
    ) -> None:
        """Follow another schedule (the window took it over, or handed it on)."""
        self.relay.follow(schedule)
        self.relay.set_task_of(task_of)
        self._retry_now = retry_now
        self._recurring = recurring
        self.runs_here = runs_here

    def close(self) -> None:
        self.relay.close()

    def _on_relay_notified(self, notification: Notification) -> None:
        # The desktop notice may fail on its own; the outside channels are told anyway.
        self._show_notice(notification)
        if self.outside is not None and self.runs_here:
            self.outside.submit(notification.message)

    @never_raises("showing a notification")
    def _show_notice(self, notification: Notification) -> None:
        recurring = False
        if isinstance(notification.event, TaskExhausted):
            with contextlib.suppress(TaskguiError):  # deleted meanwhile
                recurring = self._recurring(notification.message.task_id)
        self.notifier.notify(notice_for(notification, recurring))

    @never_raises("a notification action")
    def _on_notifier_action_requested(self, task_id: int, key: str) -> None:
        try:
            if key == "retry":
                self._retry_now(task_id)
            elif key == "log":
                self.log_requested.emit(task_id)
            elif key == "snooze":
                self.relay.snooze(task_id)
        except TaskguiError as error:
            self.problem_occurred.emit(str(error))
