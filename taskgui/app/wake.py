"""The window's side of a calm wake-up: the service hears of sleeps, and asks here.

The window runs the schedule with the policy in its Settings (read at each wake-up,
so a change applies to the next one without a restart) and can answer ``ask``:
``wake_asked`` shows the ``WakePrompt``, whose answer goes back to the service. A
window that follows a daemon asks nothing: the daemon spreads (``app/daemon.py``).
"""

from __future__ import annotations

import logging

from PySide6.QtDBus import QDBusConnection
from PySide6.QtWidgets import QWidget

from taskgui.core.errors import TaskguiError
from taskgui.core.wake import WakeAnswer
from taskgui.runtime.conditions.sleep_watch import SleepWatch
from taskgui.runtime.guard import never_raises
from taskgui.runtime.schedule_client import LiveScheduleClient
from taskgui.runtime.service import SchedulerService
from taskgui.ui.desktop.settings import Settings
from taskgui.ui.plain_text import warn
from taskgui.ui.window.wake_prompt import WakePrompt

log = logging.getLogger(__name__)


def follow_wake_ups(service: SchedulerService, settings: Settings) -> None:
    """Before ``start``: the Settings' policy, someone to ask, and logind's signal."""
    service.set_wake_policy(lambda: settings.wake_policy, can_ask=True)
    if not service.watch_sleep(SleepWatch(QDBusConnection.systemBus())):
        log.info("no system bus: a wake-up is noticed by the clock alone")


def ask_on_wake(service: LiveScheduleClient, window: QWidget) -> WakePrompt | None:
    """Put a wake-up's held catch-ups to the person at ``window``."""
    if not isinstance(service, SchedulerService):
        return None  # a daemon's schedule: it does not ask
    prompt = WakePrompt(window)
    service.wake_asked.connect(prompt.ask)

    @never_raises("answering the wake-up question")
    def answer(choice: WakeAnswer) -> None:
        try:
            service.answer_wake(choice)
        except TaskguiError as error:
            warn(window, "taskgui", str(error))

    prompt.answered.connect(answer)
    return prompt
