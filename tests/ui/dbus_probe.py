"""A fake notification server and a client, for one real D-Bus round trip in tests.

Run under ``dbus-run-session`` (a private session bus):

    python -m tests.ui.dbus_probe client OUT_FILE

The client starts ``python -m tests.ui.dbus_probe server LOG_FILE``, which owns
``org.freedesktop.Notifications`` on that bus and writes the member and D-Bus signature
of every call it gets to LOG_FILE. The client then raises a notice through
``desktop_notifier()`` exactly as the app does and writes a JSON report to OUT_FILE:
what the server saw, the capabilities, and the notification id mapped to the task.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

from PySide6.QtCore import QCoreApplication, QElapsedTimer, QTimer
from PySide6.QtDBus import QDBusConnection, QDBusMessage, QDBusVirtualObject

from taskgui.ui.notify.dbus_notifier import PATH, SERVICE, desktop_notifier
from taskgui.ui.notify.notifier import Notice, NoticeKind
from tests.helpers.notifications_xml import INTROSPECTION

NOTIFICATION_ID = 7
# What a hostile task can put in a notice: its name in the title, its error in the body.
TITLE = "“<b>T</b>” failed"
MESSAGE = "Gave up: <img src=/dev/zero> &amp; <a href='https://example.com/'>x</a>"


class _FakeServer(QDBusVirtualObject):
    def __init__(self, log_file: Path) -> None:
        super().__init__()
        self._log = log_file

    def introspect(self, path: str) -> str:
        return ""

    def handleMessage(self, message: QDBusMessage, connection: QDBusConnection) -> bool:
        member = message.member()
        if member == "Introspect":
            connection.send(message.createReply(INTROSPECTION))
            return True
        with self._log.open("a", encoding="utf-8") as log:
            arguments = [a for a in message.arguments() if isinstance(a, str | int | list)]
            log.write(json.dumps([member, message.signature(), arguments]) + "\n")
        if member == "GetCapabilities":
            connection.send(message.createReply(["actions", "body"]))
        elif member == "Notify":
            connection.send(message.createReply(NOTIFICATION_ID))
        else:
            connection.send(
                message.createErrorReply("org.freedesktop.DBus.Error.UnknownMethod", member)
            )
        return True


def serve(log_file: Path) -> int:
    app = QCoreApplication([])
    bus = QDBusConnection.sessionBus()
    server = _FakeServer(log_file)
    if not bus.registerVirtualObject(PATH, server) or not bus.registerService(SERVICE):
        return 1
    QTimer.singleShot(20_000, app.quit)  # never outlive a test that died
    app.exec()
    return 0


def probe(out_file: Path) -> int:
    log_file = out_file.with_suffix(".server.log")
    server = subprocess.Popen(
        [sys.executable, "-m", "tests.ui.dbus_probe", "server", str(log_file)]
    )
    try:
        app = QCoreApplication([])
        bus = QDBusConnection.sessionBus()
        deadline = time.monotonic() + 10
        interface = bus.interface()
        while not interface.isServiceRegistered(SERVICE).value():
            if time.monotonic() > deadline:
                return 2
            time.sleep(0.05)
        notifier = desktop_notifier("io.github.taskgui.TaskGui", "/icons/taskgui.svg")
        if notifier is None:
            return 3
        notifier.notify(Notice(kind=NoticeKind.EXHAUSTED, title=TITLE, message=MESSAGE, task_id=42))
        timer = QElapsedTimer()
        timer.start()
        while not notifier.tasks_by_id and timer.elapsed() < 10_000:
            app.processEvents()
            time.sleep(0.01)
        calls = [json.loads(line) for line in log_file.read_text(encoding="utf-8").splitlines()]
        out_file.write_text(
            json.dumps(
                {"calls": calls, "mapped": {str(k): v for k, v in notifier.tasks_by_id.items()}}
            ),
            encoding="utf-8",
        )
        return 0
    finally:
        server.terminate()
        server.wait(timeout=10)


if __name__ == "__main__":
    mode, path = sys.argv[1], Path(sys.argv[2])
    sys.exit(serve(path) if mode == "server" else probe(path))
