"""LeaderNews: a row is told once every outlet sent what it was handed for it; rows an
outlet holds until quiet hours end are not waited for by a stopping node."""

from __future__ import annotations

from collections.abc import Callable

from pytestqt.qtbot import QtBot

from taskgui.runtime.cluster.news import LeaderNews
from taskgui.store.memory import MemoryRepository
from taskgui.store.postgres.news import NewsItem


class Outlet:
    """Keeps each callback until ``send``; answers ``holds`` (quiet hours hold it)."""

    def __init__(self, *, holds: bool) -> None:
        self.holds = holds
        self.waiting: list[Callable[[], None]] = []

    def __call__(self, passed: Callable[[], None]) -> bool:
        self.waiting.append(passed)
        return self.holds

    def send(self) -> None:
        for passed in self.waiting:
            passed()
        self.waiting = []


def test_rows_held_for_quiet_hours_are_told_later_and_not_waited_for(qtbot: QtBot) -> None:
    news = LeaderNews(MemoryRepository())
    told: list[list[int]] = []
    drained: list[bool] = []
    news.told.connect(told.append)
    news.drained.connect(lambda: drained.append(True))
    outlet = Outlet(holds=True)
    news.hold_until_sent(outlet)
    news.tell([NewsItem(id=1, events=())])
    assert news.pending == 0  # held until the quiet hours end: a stop need not wait
    outlet.holds = False
    news.tell([NewsItem(id=2, events=())])
    assert news.pending == 1  # being sent: worth waiting for
    outlet.send()  # the quiet hours ended; everything went out
    qtbot.waitUntil(lambda: len(told) == 2, timeout=5_000)
    assert sorted(told) == [[1], [2]]  # each row told once, only now
    assert news.pending == 0 and drained
