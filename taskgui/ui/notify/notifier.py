"""Telling a person that a task failed, wherever the desktop lets us.

A ``Notice`` says what happened and which task it is about. A ``Notifier`` raises it
and reports a click on it as ``activated(task_id)``; the shell then opens that task's
history. Three notifiers exist because desktops differ:

* ``TrayNotifier``: a balloon from the tray icon, where there is a tray.
* ``DBusNotifier`` (in ``dbus_notifier``): the desktop's notification service, where
  there is no tray but a session bus (GNOME without extensions, for one).
* ``BannerNotifier``: a bar at the top of the main window, where there is neither
  (and offscreen, which is how tests see what was raised).

``notice_for_exhausted`` / ``notice_for_retry`` hold the wording, so every path says
the same thing.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from PySide6.QtCore import QObject, Signal
from PySide6.QtWidgets import QSystemTrayIcon

from taskgui.core.duration import countdown_text
from taskgui.core.events import RetryScheduled, TaskExhausted
from taskgui.runtime.guard import never_raises
from taskgui.ui.notify.banner import Banner
from taskgui.ui.plain_text import inert_markup, shown, shown_lines
from taskgui.ui.table.formatting import outcome_text

BALLOON_MS = 10_000


class NoticeKind(Enum):
    EXHAUSTED = "exhausted"  # every attempt failed: loud
    RETRYING = "retrying"  # a run failed and will be retried: quiet
    FAILING = "failing"  # the N-th failure in a row (rule after:N): loud
    RECOVERED = "recovered"  # the first success after failures
    INFO = "info"  # the app says something about itself


@dataclass(frozen=True, slots=True, kw_only=True)
class Notice:
    """One notification: a title, a line or two of detail, and the task it is about."""

    kind: NoticeKind
    title: str
    message: str
    task_id: int | None = None

    @property
    def urgent(self) -> bool:
        return self.kind in (NoticeKind.EXHAUSTED, NoticeKind.FAILING)

    @property
    def about_a_failure(self) -> bool:
        """A failure: its notification offers Retry Now, Open Log and Snooze."""
        return self.kind in (NoticeKind.EXHAUSTED, NoticeKind.RETRYING, NoticeKind.FAILING)


def _reason(error: str) -> str:
    # Its lines joined into one: a notice has a line or two of room. The sentence's
    # first letter capitalised ("Exit status 3."), but not the program's own name,
    # which is written in lower case ("taskgui stopped while this ran", not "Taskgui").
    error = " ".join(shown_lines(error).split())
    if not error or error.startswith("taskgui "):
        return error
    return error[0].upper() + error[1:]


def notice_for_exhausted(event: TaskExhausted, error: str, recurring: bool = False) -> Notice:
    """``“Fetch mail” failed`` / ``Gave up after 3 attempts: exit status 1.``"""
    attempts = f"{event.attempts} attempt{'s' if event.attempts != 1 else ''}"
    why = _reason(error) or f"the last one {outcome_text(event.outcome)}"
    message = f"Gave up after {attempts}: {why}."
    if recurring:
        message += " It runs again at its next scheduled time."
    return Notice(
        kind=NoticeKind.EXHAUSTED,
        title=f"“{shown(event.name)}” failed",
        message=message,
        task_id=event.task_id,
    )


def notice_for_retry(event: RetryScheduled, name: str, error: str) -> Notice:
    """``“Upload report” failed, will retry`` / ``Exit status 6. Attempt 2 of 5 in 2m 00s.``"""
    seconds = max(0, round(event.delay.total_seconds()))
    why = _reason(error)
    message = f"{why}. " if why else ""
    message += f"Attempt {event.attempt} of {event.max_attempts} in {countdown_text(seconds)}."
    return Notice(
        kind=NoticeKind.RETRYING,
        title=f"“{shown(name)}” failed, will retry",
        message=message,
        task_id=event.task_id,
    )


class Notifier(QObject):
    """Raises notices; reports clicks. Subclasses implement ``show_notice``.

    ``notify`` never raises: a notification that cannot be shown is logged, since the
    failure it reports is also in the table and the history.

    Signals:
        activated(int): the person clicked a notice about this task id.
        action_requested(int, str): the person chose an action on a notice about this
            task id: ``retry``, ``log`` or ``snooze`` (where the desktop offers them).
    """

    activated = Signal(int)
    action_requested = Signal(int, str)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.raised: list[Notice] = []  # the most recent notices, newest last

    def notify(self, notice: Notice) -> None:
        self.raised = [*self.raised[-49:], notice]
        self._show_guarded(notice)

    @never_raises("showing a notification")
    def _show_guarded(self, notice: Notice) -> None:
        self.show_notice(notice)

    def show_notice(self, notice: Notice) -> None:
        raise NotImplementedError

    def withdraw(self, task_id: int) -> None:
        """Take back a "gave up" notice about a task that runs again (it is stale news),
        where the notifier can; a desktop's own notifications expire by themselves."""

    def close(self) -> None:
        """Withdraw what is still showing, where the desktop allows it."""


class BannerNotifier(Notifier):
    """Shows notices in the main window's banner; its button opens the task's history."""

    def __init__(self, banner: Banner, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.banner = banner
        # What the banner stands for since it was last dismissed: the latest shown,
        # the rest its "+N earlier".
        self._showing: list[Notice] = []
        banner.action_requested.connect(self._on_banner_action_requested)
        banner.dismissed.connect(self._on_banner_dismissed)

    def show_notice(self, notice: Notice) -> None:
        self._showing.append(notice)
        self.banner.show_message(
            notice.title,
            notice.message,
            task_id=notice.task_id,
            urgent=notice.urgent,
        )

    def withdraw(self, task_id: int) -> None:
        """Only that task's "gave up" goes: the others it stood beside are still true
        (a trial: Retry Now on one of three given-up tasks emptied the banner)."""
        rest = [
            notice
            for notice in self._showing
            if not (notice.kind is NoticeKind.EXHAUSTED and notice.task_id == task_id)
        ]
        if len(rest) == len(self._showing):
            return
        self.banner.dismiss()  # and shown again with what is left, the latest on top
        for notice in rest:
            self.show_notice(notice)

    def close(self) -> None:
        self.banner.dismiss()

    def _on_banner_action_requested(self, task_id: int) -> None:
        self.activated.emit(task_id)

    def _on_banner_dismissed(self) -> None:
        self._showing = []


class TrayNotifier(Notifier):
    """A balloon from the tray icon. A click on it is about the latest notice."""

    def __init__(self, tray: QSystemTrayIcon, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._tray = tray
        self._task_id: int | None = None
        tray.messageClicked.connect(self._on_tray_message_clicked)

    def show_notice(self, notice: Notice) -> None:
        self._task_id = notice.task_id
        icon = (
            QSystemTrayIcon.MessageIcon.Critical
            if notice.urgent
            else QSystemTrayIcon.MessageIcon.Warning
            if notice.kind is NoticeKind.RETRYING
            else QSystemTrayIcon.MessageIcon.Information
        )
        # Qt draws a balloon's title with its rich-text guess, and a D-Bus tray hands
        # both texts to a notification server that may parse markup: make them inert.
        self._tray.showMessage(
            inert_markup(notice.title), inert_markup(notice.message), icon, BALLOON_MS
        )

    def _on_tray_message_clicked(self) -> None:
        if self._task_id is not None:
            self.activated.emit(self._task_id)
