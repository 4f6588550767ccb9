"""Both ways of reaching a schedule are one ``LiveScheduleClient`` (checked by mypy
here too: the assignments below are the static proof), and say where it runs."""

from __future__ import annotations

from pathlib import Path

from pytestqt.qtbot import QtBot

from taskgui.core.clock import FakeClock
from taskgui.runtime.remote import RemoteScheduler
from taskgui.runtime.schedule_client import LiveScheduleClient
from taskgui.runtime.service import SchedulerService
from taskgui.store.memory import MemoryRepository
from taskgui.store.sqlite.repository import SqliteRepository


def test_the_service_and_a_follower_are_both_schedule_clients(tmp_path: Path, qtbot: QtBot) -> None:
    clock = FakeClock()
    store = SqliteRepository(tmp_path / "client.sqlite3")
    try:
        here: LiveScheduleClient = SchedulerService(MemoryRepository(), clock)
        elsewhere: LiveScheduleClient = RemoteScheduler(store, clock, owner=lambda: "daemon")
        assert (here.runs_here, elsewhere.runs_here) == (True, False)
        heard: list[str] = []
        for client in (here, elsewhere):
            client.owner_changed.connect(heard.append)  # declared once, for both
        elsewhere.start()
        assert heard == []  # the owner was read at start; nothing changed since
        elsewhere.shutdown()
    finally:
        store.close()
