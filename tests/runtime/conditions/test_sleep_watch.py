"""logind's PrepareForSleep over a private bus, sent by a fake logind (jeepney)."""

from __future__ import annotations

from PySide6.QtDBus import QDBusConnection
from pytestqt.qtbot import QtBot

from taskgui.runtime.conditions.sleep_watch import SleepWatch
from tests.helpers.private_bus import FakeDesktopServices, connect, private_bus

WAIT_MS = 5_000


def test_sleep_and_resume_reach_the_watch(qtbot: QtBot) -> None:
    with private_bus() as address:
        services = FakeDesktopServices(address, ["logind"])
        try:
            watch = SleepWatch(connect(address))
            assert watch.start()
            with qtbot.waitSignal(watch.going_to_sleep, timeout=WAIT_MS):
                services.command("sleep true")
            with qtbot.waitSignal(watch.woke, timeout=WAIT_MS):
                services.command("sleep false")
        finally:
            services.stop()


def test_someone_elses_signal_of_that_name_is_not_a_resume(qtbot: QtBot) -> None:
    """Only logind's name may say the machine slept (any client can send a signal)."""
    with private_bus() as address:
        impostor = FakeDesktopServices(address, [])  # owns no logind name
        try:
            watch = SleepWatch(connect(address))
            watch.start()
            woke: list[bool] = []
            watch.woke.connect(lambda: woke.append(True))
            impostor.command("sleep false")
            qtbot.wait(300)
            assert woke == []
        finally:
            impostor.stop()


def test_without_a_bus_it_says_it_cannot_listen() -> None:
    watch = SleepWatch(QDBusConnection.connectToBus("unix:path=/nonexistent", "taskgui-none"))
    assert watch.start() is False
