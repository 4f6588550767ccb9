"""Notifications through the desktop's ``org.freedesktop.Notifications`` service.

Used where there is no tray but a session bus (GNOME without extensions, for one).
QtDBus watches the service: whether it exists, what it can do (``GetCapabilities``) and
which notification was clicked (the ``ActionInvoked`` signal).

The ``Notify`` call itself goes through ``gdbus`` (or systemd's ``busctl``), run with
QProcess so it never blocks the window. The reason: ``Notify`` takes ``replaces_id`` as
a D-Bus ``uint32``, and PySide6 can only marshal Python ints as signed or 16-bit values,
which every notification server rejects as a wrong signature. Both tools type the
arguments exactly (``gdbus`` from the service's introspection, ``busctl`` from the
signature we give it). Building their argument lists is pure, so tests check the
message without a bus.
"""

from __future__ import annotations

import logging
import re
import shutil
from collections.abc import Callable, Collection
from dataclasses import dataclass

from PySide6.QtCore import SLOT, QDeadlineTimer, QObject, QProcess, QTimer, Slot
from PySide6.QtDBus import QDBus, QDBusConnection, QDBusMessage

from taskgui.runtime.guard import never_raises
from taskgui.runtime.weak_slot import weak_slot
from taskgui.ui.notify.notifier import Notice, Notifier
from taskgui.ui.plain_text import escape_markup, inert_markup

log = logging.getLogger(__name__)

SERVICE = "org.freedesktop.Notifications"
PATH = "/org/freedesktop/Notifications"
INTERFACE = SERVICE
SIGNATURE = "susssasa{sv}i"
DEFAULT_ACTION = "default"
# The actions on a notice about a failure, as (key, label) pairs; a server that shows
# actions as buttons shows these, and reports the key in ActionInvoked.
FAILURE_ACTIONS = (("retry", "Retry Now"), ("log", "Open Log"), ("snooze", "Snooze 1 h"))
ACTION_KEYS = frozenset(key for key, _label in FAILURE_ACTIONS)
SEND_TIMEOUT_MS = 5_000
# At quit, how long the notices still being sent may take to reach the desktop (the
# last "gave up" is the one a person most needs) before their senders are ended.
CLOSE_GRACE_MS = 1_000
CLOSE_KILL_WAIT_MS = 500
CAPABILITIES_TIMEOUT_MS = 1_000
MAX_TRACKED = 64

Hint = tuple[str, str, int | str]  # key, D-Bus type code ("y", "s", "b"), value


@dataclass(frozen=True, slots=True)
class NotifyCall:
    """The arguments of one ``Notify`` call, in order."""

    app_name: str
    replaces_id: int
    app_icon: str
    summary: str
    body: str
    actions: tuple[str, ...]
    hints: tuple[Hint, ...]
    expire_timeout: int


def notify_call(
    notice: Notice,
    *,
    app_name: str = "taskgui",
    app_icon: str = "",
    desktop_entry: str = "taskgui",
    capabilities: Collection[str] = ("actions", "body"),
    replaces_id: int = 0,
) -> NotifyCall:
    """What to send for ``notice``, given what the server said it can do."""
    body = notice.message if "body" in capabilities else ""
    # The spec lets a server read markup in the body, and servers that do not support
    # it are told to filter tags out (so some parse it anyway): the body never reaches
    # one as markup. Escaped where the server says it reads markup (exact); made
    # inert elsewhere, where an escape would show as "&lt;".
    body = escape_markup(body) if "body-markup" in capabilities else inert_markup(body)
    actions: tuple[str, ...] = ()
    if notice.task_id is not None and "actions" in capabilities:
        actions = (DEFAULT_ACTION, "Show History")
        if notice.about_a_failure:
            actions += tuple(part for action in FAILURE_ACTIONS for part in action)
    hints: list[Hint] = [("urgency", "y", 2 if notice.urgent else 1)]
    if desktop_entry:
        hints.append(("desktop-entry", "s", desktop_entry))
    return NotifyCall(
        app_name=app_name,
        replaces_id=replaces_id,
        app_icon=app_icon,
        summary=inert_markup(notice.title),  # plain by the spec; inert costs nothing
        body=body,
        actions=actions,
        hints=tuple(hints),
        expire_timeout=-1,  # the server's default
    )


# ------------------------------------------------------------------ gdbus / busctl

_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def gvariant_string(text: str) -> str:
    """``text`` as a GVariant text-format string literal."""
    text = _CONTROL.sub(" ", text)
    for plain, escaped in (("\\", "\\\\"), ("'", "\\'"), ("\n", "\\n"), ("\t", "\\t")):
        text = text.replace(plain, escaped)
    return f"'{text}'"


def _gvariant_hint(code: str, value: int | str) -> str:
    if code == "y":
        return f"<byte {int(value)}>"
    if code == "b":
        return f"<{'true' if value else 'false'}>"
    if code == "i":
        return f"<int32 {int(value)}>"
    return f"<{gvariant_string(str(value))}>"


def gdbus_arguments(call: NotifyCall) -> list[str]:
    """``gdbus call`` arguments for ``call``."""
    actions = (
        "[" + ", ".join(gvariant_string(action) for action in call.actions) + "]"
        if call.actions
        else "@as []"
    )
    hints = (
        "{"
        + ", ".join(f"{gvariant_string(k)}: {_gvariant_hint(c, v)}" for k, c, v in call.hints)
        + "}"
        if call.hints
        else "@a{sv} {}"
    )
    return [
        "call",
        "--session",
        "--dest",
        SERVICE,
        "--object-path",
        PATH,
        "--method",
        f"{INTERFACE}.Notify",
        "--",
        gvariant_string(call.app_name),
        f"uint32 {call.replaces_id}",
        gvariant_string(call.app_icon),
        gvariant_string(call.summary),
        gvariant_string(call.body),
        actions,
        hints,
        f"int32 {call.expire_timeout}",
    ]


def busctl_arguments(call: NotifyCall) -> list[str]:
    """``busctl call`` arguments for ``call`` (the signature types every value)."""
    hints: list[str] = []
    for key, code, value in call.hints:
        hints += [key, code, str(int(value)) if code in "ybi" else str(value)]
    return [
        "--user",
        "call",
        "--",
        SERVICE,
        PATH,
        INTERFACE,
        "Notify",
        SIGNATURE,
        call.app_name,
        str(call.replaces_id),
        call.app_icon,
        call.summary,
        call.body,
        str(len(call.actions)),
        *call.actions,
        str(len(call.hints)),
        *hints,
        str(call.expire_timeout),
    ]


_GDBUS_ID = re.compile(r"^\(\s*(?:uint32\s+)?(\d+)\s*,\s*\)\s*$")
_BUSCTL_ID = re.compile(r"^[ui]\s+(\d+)\s*$")


def parse_notification_id(output: str) -> int | None:
    """The id in ``gdbus`` output ``(uint32 7,)`` or ``busctl`` output ``u 7``."""
    text = output.strip()
    match = _GDBUS_ID.match(text) or _BUSCTL_ID.match(text)
    return int(match.group(1)) if match else None


@dataclass(frozen=True, slots=True)
class Sender:
    """A program that can place the ``Notify`` call, and how to ask it."""

    program: str
    arguments: Callable[[NotifyCall], list[str]]


def find_sender(which: Callable[[str], str | None] = shutil.which) -> Sender | None:
    gdbus = which("gdbus")
    if gdbus:
        return Sender(gdbus, gdbus_arguments)
    busctl = which("busctl")
    if busctl:
        return Sender(busctl, busctl_arguments)
    return None


# ------------------------------------------------------------------------ notifier


def service_available(bus: QDBusConnection) -> bool:
    """Whether the session bus has a notification service (running or activatable)."""
    if not bus.isConnected():
        return False
    interface = bus.interface()
    if interface is None:
        return False
    if bool(interface.isServiceRegistered(SERVICE).value()):
        return True
    activatable = interface.activatableServiceNames().value()
    return SERVICE in (activatable or [])


def server_capabilities(bus: QDBusConnection) -> frozenset[str]:
    message = QDBusMessage.createMethodCall(SERVICE, PATH, INTERFACE, "GetCapabilities")
    reply = bus.call(message, QDBus.CallMode.Block, CAPABILITIES_TIMEOUT_MS)
    if reply.type() != QDBusMessage.MessageType.ReplyMessage or not reply.arguments():
        return frozenset({"body"})
    return frozenset(str(item) for item in reply.arguments()[0])


class DBusNotifier(Notifier):
    """Raises notices on the desktop; a click on one (``ActionInvoked``) activates it.

    A new notice about a task replaces the one still showing for it, so a task that
    keeps failing does not stack up notifications.
    """

    def __init__(
        self,
        bus: QDBusConnection | None,
        sender: Sender,
        *,
        capabilities: Collection[str] = ("actions", "body"),
        desktop_entry: str = "taskgui",
        app_icon: str = "",
        close_grace_ms: int = CLOSE_GRACE_MS,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._sender = sender
        self._close_grace_ms = close_grace_ms
        self._closed = False
        self._capabilities = frozenset(capabilities)
        self._desktop_entry = desktop_entry
        self._app_icon = app_icon
        self.tasks_by_id: dict[int, int] = {}  # notification id -> task id
        self._ids_by_task: dict[int, int] = {}
        self._warned = False
        if bus is not None:
            for signal, slot in (
                ("ActionInvoked", "_on_bus_action_invoked(uint,QString)"),
                ("NotificationClosed", "_on_bus_notification_closed(uint,uint)"),
            ):
                # The stubs say bytes; PySide6 only accepts the str that SLOT() returns.
                connected = bus.connect(  # type: ignore[call-overload]
                    SERVICE, PATH, INTERFACE, signal, self, SLOT(slot)
                )
                if not connected:
                    log.warning("cannot follow %s.%s", INTERFACE, signal)

    def call_for(self, notice: Notice) -> NotifyCall:
        replaces = self._ids_by_task.get(notice.task_id, 0) if notice.task_id is not None else 0
        return notify_call(
            notice,
            app_icon=self._app_icon,
            desktop_entry=self._desktop_entry,
            capabilities=self._capabilities,
            replaces_id=replaces,
        )

    def show_notice(self, notice: Notice) -> None:
        if self._closed:
            return  # the app is ending: a sender now would outlive it
        # The process is the notifier's child, so it cannot outlive it, and its slots
        # reach the notifier weakly (runtime.weak_slot says why: a crash at quit).
        process = QProcess(self)
        answered = weak_slot(DBusNotifier._on_process_finished, self)
        not_started = weak_slot(DBusNotifier._on_process_error_occurred, self)
        task_id = notice.task_id
        process.finished.connect(lambda code, _status: answered(process, code, task_id))
        process.errorOccurred.connect(lambda _error: not_started(process))
        process.start(self._sender.program, self._sender.arguments(self.call_for(notice)))
        QTimer.singleShot(SEND_TIMEOUT_MS, process, process.kill)  # dropped once it is gone

    def close(self) -> None:
        """Give the notices still being sent a moment to arrive, then end their senders;
        show nothing more.

        Called as the app ends (its window is gone, so the short wait blocks nobody): a
        sender left running would be killed by its QProcess's destructor with a warning
        on the terminal, its notice lost without a word.
        """
        self._closed = True
        deadline = QDeadlineTimer(self._close_grace_ms)
        for process in self.sending():
            process.waitForFinished(max(0, deadline.remainingTime()))
        stuck = self.sending()
        for process in stuck:
            process.kill()
        deadline = QDeadlineTimer(CLOSE_KILL_WAIT_MS)  # one wait for them all
        for process in stuck:
            process.waitForFinished(max(0, deadline.remainingTime()))

    def sending(self) -> list[QProcess]:
        """The ``Notify`` calls still under way."""
        return [
            process
            for process in self.findChildren(QProcess)
            if process.state() != QProcess.ProcessState.NotRunning
        ]

    def remember(self, notification_id: int, task_id: int) -> None:
        """Map a shown notification to its task (its id came back from ``Notify``)."""
        self.tasks_by_id[notification_id] = task_id
        self._ids_by_task[task_id] = notification_id
        while len(self.tasks_by_id) > MAX_TRACKED:
            oldest = next(iter(self.tasks_by_id))
            self._forget(oldest)

    def _forget(self, notification_id: int) -> None:
        task_id = self.tasks_by_id.pop(notification_id, None)
        if task_id is not None and self._ids_by_task.get(task_id) == notification_id:
            del self._ids_by_task[task_id]

    def _on_process_finished(self, process: QProcess, code: int, task_id: int | None) -> None:
        try:
            self._read_answer(process, code, task_id)
        finally:
            process.deleteLater()

    @never_raises("reading the notification service's answer")
    def _read_answer(self, process: QProcess, code: int, task_id: int | None) -> None:
        output = bytes(process.readAllStandardOutput().data()).decode("utf-8", "replace")
        if code != 0:
            error = bytes(process.readAllStandardError().data()).decode("utf-8", "replace")
            self._warn(f"{self._sender.program} failed ({code}): {error.strip()}")
        elif task_id is not None:
            notification_id = parse_notification_id(output)
            if notification_id is not None:
                self.remember(notification_id, task_id)

    def _on_process_error_occurred(self, process: QProcess) -> None:
        self._warn(f"cannot run {self._sender.program}: {process.errorString()}")

    def _warn(self, message: str) -> None:
        if not self._warned:  # once: the log should not fill up with the same problem
            self._warned = True
            log.warning("desktop notification not shown: %s", message)

    @Slot("uint", str)
    @never_raises("handling a notification click")
    def _on_bus_action_invoked(self, notification_id: int, action_key: str) -> None:
        task_id = self.tasks_by_id.get(int(notification_id))
        if task_id is not None and action_key == DEFAULT_ACTION:
            self.activated.emit(task_id)
        elif task_id is not None and action_key in ACTION_KEYS:
            self.action_requested.emit(task_id, action_key)

    @Slot("uint", "uint")
    def _on_bus_notification_closed(self, notification_id: int, _reason: int) -> None:
        self._forget(int(notification_id))


def desktop_notifier(
    desktop_entry: str, app_icon: str = "", parent: QObject | None = None
) -> DBusNotifier | None:
    """A DBusNotifier if the session has a notification service we can reach, else None."""
    sender = find_sender()
    if sender is None:
        return None
    bus = QDBusConnection.sessionBus()
    if not service_available(bus):
        return None
    return DBusNotifier(
        bus,
        sender,
        capabilities=server_capabilities(bus),
        desktop_entry=desktop_entry,
        app_icon=app_icon,
        parent=parent,
    )
