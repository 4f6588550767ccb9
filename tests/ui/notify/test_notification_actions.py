"""Retry Now, Open Log and Snooze 1 h on a desktop notification, over a real private
D-Bus session bus with a fake notification server that clicks them."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from PySide6.QtDBus import QDBusConnection
from pytestqt.qtbot import QtBot

from taskgui.core.events import TaskExhausted
from taskgui.core.states import RunOutcome
from taskgui.ui.notify.dbus_notifier import DBusNotifier, find_sender
from taskgui.ui.notify.notifier import Notice, NoticeKind, notice_for_exhausted
from tests.helpers.jeepney_fakes import FakeNotificationServer
from tests.helpers.private_bus import private_bus

pytestmark = pytest.mark.skipif(
    shutil.which("dbus-daemon") is None or find_sender() is None,
    reason="needs dbus-daemon and gdbus or busctl",
)
# Given, not asked for: QtDBus's blocking GetCapabilities gets no answer from this
# jeepney-served fake (gdbus does); tests/ui/dbus_probe.py covers that call.
CAPABILITIES = ("actions", "body")
EXHAUSTED = TaskExhausted(task_id=42, name="Fetch mail", attempts=3, outcome=RunOutcome.FAILED)


@pytest.fixture
def bus_address(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    with private_bus() as address:
        # gdbus (which places the Notify call) finds the bus through the environment.
        monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", address)
        yield address


def connect(address: str, name: str) -> QDBusConnection:
    bus = QDBusConnection.connectToBus(address, name)
    assert bus.isConnected()
    return bus


def settle(qtbot: QtBot, notifier: DBusNotifier) -> None:
    """End the notifier as the app does at quit: its calls in flight finish first."""
    notifier.close()
    assert notifier.sending() == []


def test_each_action_clicked_on_the_server_reaches_the_app_with_its_task(
    bus_address: str, qtbot: QtBot
) -> None:
    server = FakeNotificationServer(bus_address)
    bus = connect(bus_address, "actions-test")
    try:
        sender = find_sender()
        assert sender is not None
        notifier = DBusNotifier(bus, sender, capabilities=CAPABILITIES)
        requested: list[tuple[int, str]] = []
        notifier.action_requested.connect(lambda task, key: requested.append((task, key)))
        notifier.notify(notice_for_exhausted(EXHAUSTED, "exit status 1"))
        qtbot.waitUntil(lambda: notifier.tasks_by_id == {7: 42}, timeout=10_000)
        for key in ("retry", "log", "bogus", "snooze"):
            server.click(key)
        qtbot.waitUntil(lambda: len(requested) == 3, timeout=10_000)
        qtbot.wait(100)  # the unknown key must not arrive late either
        assert requested == [(42, "retry"), (42, "log"), (42, "snooze")]
        [notify] = [call for call in server.calls if call[0] == "Notify"]
        assert notify[1] == "susssasa{sv}i"
        actions = notify[2][5]
        assert actions == [
            *("default", "Show History"),
            *("retry", "Retry Now", "log", "Open Log", "snooze", "Snooze 1 h"),
        ]
        settle(qtbot, notifier)
    finally:
        server.close()
        QDBusConnection.disconnectFromBus("actions-test")


def test_a_notice_that_is_no_failure_offers_no_failure_actions(
    bus_address: str, qtbot: QtBot
) -> None:
    server = FakeNotificationServer(bus_address)
    bus = connect(bus_address, "recovered-test")
    try:
        sender = find_sender()
        assert sender is not None
        notifier = DBusNotifier(bus, sender, capabilities=CAPABILITIES)
        notice = Notice(kind=NoticeKind.RECOVERED, title="“x” works again", message="", task_id=3)
        notifier.notify(notice)
        qtbot.waitUntil(lambda: any(c[0] == "Notify" for c in server.calls), timeout=10_000)
        [notify] = [call for call in server.calls if call[0] == "Notify"]
        assert notify[2][5] == ["default", "Show History"]
        settle(qtbot, notifier)
    finally:
        server.close()
        QDBusConnection.disconnectFromBus("recovered-test")
