"""A desktop notifier that goes while a ``Notify`` call is still under way.

The call runs as a child process; the notifier can be closed at quit, or simply dropped,
with one in flight. Both once crashed or could crash the app: a slot that held the
notifier made a cycle through a Qt connection, and a call ending after Python's collector
had torn the notifier's wrapper down crashed in ``~QObject`` (SIGBUS). A stand-in sender
(``sh``) plays ``gdbus``: it waits, then answers with a notification id as gdbus does.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from PySide6.QtCore import QProcess
from pytestqt.qtbot import QtBot

from taskgui.ui.notify.dbus_notifier import DBusNotifier, NotifyCall, Sender
from taskgui.ui.notify.notifier import Notice, NoticeKind

ROOT = Path(__file__).resolve().parents[3]


def slow_sender(seconds: float, notification_id: int = 7) -> Sender:
    def arguments(_call: NotifyCall) -> list[str]:
        return ["-c", f"sleep {seconds}; echo '(uint32 {notification_id},)'"]

    return Sender("sh", arguments)


def notice(task_id: int) -> Notice:
    return Notice(kind=NoticeKind.EXHAUSTED, title="gave up", message="", task_id=task_id)


DROPPED_MID_CALL = textwrap.dedent(
    """
    import gc
    from PySide6.QtCore import QCoreApplication, QElapsedTimer, QEventLoop
    from taskgui.ui.notify.notifier import Notice, NoticeKind
    from tests.ui.notify.test_notifier_lifetime import notice, slow_sender
    from taskgui.ui.notify.dbus_notifier import DBusNotifier

    app = QCoreApplication([])

    def spin(ms):
        timer = QElapsedTimer()
        timer.start()
        while timer.elapsed() < ms:
            app.processEvents(QEventLoop.ProcessEventsFlag.AllEvents, 5)

    for round in range(5):
        notifier = DBusNotifier(None, slow_sender(0.2))
        for task in range(3):
            notifier.notify(notice(task))
        spin(20)
        del notifier  # the last reference: the calls are still under way
        gc.collect()
        spin(300)  # the old code crashed here, when the calls ended
    print("survived")
    """
)


def test_a_notifier_dropped_with_calls_in_flight_does_not_crash_the_app() -> None:
    # In a child: the crash it guards against takes the whole process down.
    child = subprocess.run(
        [sys.executable, "-c", DROPPED_MID_CALL],
        cwd=ROOT,
        env={"PYTHONPATH": str(ROOT), "QT_QPA_PLATFORM": "offscreen", "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert (child.returncode, child.stdout.strip()) == (0, "survived"), child.stderr


def test_closing_lets_a_notice_in_flight_arrive(qtbot: QtBot) -> None:
    notifier = DBusNotifier(None, slow_sender(0.2, notification_id=9))
    notifier.notify(notice(42))
    assert len(notifier.sending()) == 1
    notifier.close()
    assert notifier.sending() == []
    assert notifier.tasks_by_id == {9: 42}  # its answer was read: a click still maps


def test_closing_ends_a_sender_that_does_not_answer(qtbot: QtBot) -> None:
    notifier = DBusNotifier(None, slow_sender(60), close_grace_ms=100)
    notifier.notify(notice(1))
    [process] = notifier.sending()
    notifier.close()
    assert process.state() == QProcess.ProcessState.NotRunning
    assert notifier.sending() == []
    assert notifier.tasks_by_id == {}


def test_closing_with_nothing_in_flight_is_immediate_and_final(qtbot: QtBot) -> None:
    notifier = DBusNotifier(None, slow_sender(0))
    notifier.close()
    assert notifier.sending() == []
    notifier.notify(notice(5))  # a late notice, after the close: no sender starts
    assert notifier.findChildren(QProcess) == []
