"""A burst of requests is answered a slice at a time, with the event loop's turn between
(an outsider's trial: a daemon given a Ctrl+C during an import's burst of notices
answered every one of them first, for 3.5 minutes).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import datetime

import pytest
from PySide6.QtCore import QTimer
from pytestqt.qtbot import QtBot

from taskgui.core.clock import FakeClock
from taskgui.core.operation import Op
from taskgui.runtime.inbox import SLICE_SECONDS, RequestInbox
from taskgui.runtime.service import SchedulerService
from taskgui.store.memory import MemoryRepository
from taskgui.store.requests import Request
from tests.helpers.service import CLOCK, spec

NOW = datetime.fromisoformat("2026-01-01T12:00:00+00:00")


class Slow:
    """Performs a request in ``seconds`` of the fake clock's time."""

    def __init__(self, clock: FakeClock, seconds: float) -> None:
        self.clock, self.seconds = clock, seconds
        self.done: list[int | None] = []

    def __call__(self, request: Request, now: datetime) -> str | None:
        self.clock.advance(self.seconds)
        self.done.append(request.task_id)
        return None


def test_a_burst_is_answered_a_slice_at_a_time() -> None:
    store = MemoryRepository()
    sender = store.connect()
    ids = [sender.submit_request(Op.PAUSE, n, None, NOW) for n in range(1, 8)]
    clock = FakeClock(NOW)
    slow = Slow(clock, SLICE_SECONDS * 0.6)
    turns: list[str] = []
    inbox = RequestInbox(
        store,
        clock,
        perform=slow,
        failed=lambda error: turns.append(f"failed {error}"),
        performed=lambda: turns.append("performed"),
        later=lambda: turns.append("later"),
    )

    inbox.perform_open()
    assert slow.done == [1, 2]  # the second ran past the slice: the rest waits its turn
    assert turns == ["performed", "later"]
    assert [sender.request_outcome(i)[0] for i in ids] == [True, True] + [False] * 5

    while turns[-1] == "later":
        inbox.perform_open()
    assert slow.done == list(range(1, 8))
    assert turns.count("later") == 3 and turns[-1] == "performed"
    assert all(sender.request_outcome(i) == (True, None) for i in ids)


def test_without_later_a_burst_is_answered_whole() -> None:
    store = MemoryRepository()
    sender = store.connect()
    for n in range(1, 5):
        sender.submit_request(Op.PAUSE, n, None, NOW)
    clock = FakeClock(NOW)
    slow = Slow(clock, SLICE_SECONDS * 2)
    inbox = RequestInbox(store, clock, perform=slow, failed=print, performed=lambda: None)
    inbox.perform_open()
    assert slow.done == [1, 2, 3, 4]


@pytest.fixture
def service(qtbot: QtBot) -> Iterator[tuple[SchedulerService, MemoryRepository]]:
    store = MemoryRepository()
    service = SchedulerService(store, CLOCK, workers=1, kill_grace=0.3)
    service.start()
    yield service, store
    with qtbot.waitSignal(service.stopped, timeout=10_000):
        service.shutdown(grace=0.0)
    service.pool.wait_for_done(5_000)


def test_the_service_lets_the_event_loop_run_between_slices(
    service: tuple[SchedulerService, MemoryRepository], qtbot: QtBot
) -> None:
    scheduler, store = service
    task = scheduler.add_task(spec("later", "true", first_run_at=CLOCK.now().replace(year=2099)))
    seen: list[str] = []
    perform = scheduler._perform_request

    def slow_perform(request: Request, now: datetime) -> str | None:
        time.sleep(SLICE_SECONDS / 2)
        seen.append("request")
        return perform(request, now)

    scheduler._perform_request = slow_perform  # type: ignore[method-assign]
    ticker = QTimer()
    ticker.setInterval(0)
    ticker.timeout.connect(lambda: seen.append("tick") if seen else None)
    ticker.start()
    sender = store.connect()
    ids = [sender.submit_request(Op.PAUSE, task.id, None, CLOCK.now()) for _ in range(12)]
    qtbot.waitUntil(lambda: all(sender.request_outcome(i)[0] for i in ids), timeout=10_000)
    ticker.stop()
    first, last = seen.index("request"), len(seen) - 1 - seen[::-1].index("request")
    assert "tick" in seen[first:last]  # the event loop ran while the burst was answered
    assert seen.count("request") == 12
