"""The outside notification channels of a process that runs a schedule.

``taskgui daemon`` has no window, so nothing else would send its webhooks and mails:
``outside_notifications`` follows the service with a relay, by each task's rule and
the default in the settings, and hands the news to a dispatcher thread. The window
passes its own dispatcher to the desktop shell instead (``ui.notify.news``), which
also raises the desktop notice.
"""

from __future__ import annotations

from collections.abc import Callable

from taskgui.core.clock import Clock
from taskgui.core.notify_rules import NotifyGate
from taskgui.core.status import TaskSnapshot
from taskgui.core.task import TaskId
from taskgui.runtime.notify_relay import NotifyRelay
from taskgui.runtime.notify_settings import NotifySettings, channels
from taskgui.runtime.schedule_client import ScheduleNews
from taskgui.system.notify.dispatcher import Dispatcher


class OutsideNotifications:
    """A relay and a dispatcher around ``schedule`` (a file's ``SchedulerService``, or
    a shared schedule node's ``news``); ``close`` sends what is queued."""

    def __init__(
        self,
        schedule: ScheduleNews,
        task_of: Callable[[TaskId], TaskSnapshot],
        clock: Clock,
        settings: NotifySettings,
    ) -> None:
        self.dispatcher = Dispatcher(channels(settings))
        self.relay = NotifyRelay(
            schedule,
            task_of,
            clock,
            default_rule=lambda: settings.default_rule,
            gate=NotifyGate(settings.quiet_hours),
        )
        self.relay.sinks.append(lambda notification: self.dispatcher.submit(notification.message))

    def after_sent(self, passed: Callable[[], None]) -> bool:
        """Call ``passed`` once everything the relay was given before is sent or given
        up on, what the quiet hours hold included (so only after they end): a shared
        schedule's leader deletes its news's outbox rows then, not before. Whether the
        quiet hours hold some of it (a node that stops need not wait for that)."""
        return self.relay.after_held(lambda: self.dispatcher.after_sent(passed))

    def close(self) -> None:
        self.relay.close()
        self.dispatcher.close()


def outside_dispatcher(settings: NotifySettings) -> Dispatcher:
    """For the window: the channels the settings describe, behind one thread."""
    return Dispatcher(channels(settings))
