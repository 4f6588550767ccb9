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
from taskgui.store.errors import StoreError
from taskgui.store.memory import MemoryRepository
from taskgui.store.requests import Request, RequestRow
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


class Counting(MemoryRepository):
    """The memory store, counting its reads of the open requests; it can fail a write."""

    def __init__(self) -> None:
        super().__init__()
        self.reads = 0
        self.fail_next_write = False

    def open_requests(self) -> list[RequestRow]:
        self.reads += 1
        return super().open_requests()

    def complete_request(self, request_id: int, error: str | None, now: datetime) -> None:
        if self.fail_next_write:
            self.fail_next_write = False
            raise StoreError("the disk is full")
        super().complete_request(request_id, error, now)


def _inbox(store: MemoryRepository, clock: FakeClock, turns: list[str]) -> RequestInbox:
    return RequestInbox(
        store,
        clock,
        perform=Slow(clock, SLICE_SECONDS / 4),
        failed=lambda error: turns.append(f"failed: {error}"),
        performed=lambda: None,
        later=lambda: turns.append("later"),
    )


def test_the_rest_is_read_once_and_news_meanwhile_after_it() -> None:
    """Each slice read every open request again (0.2 s at 100,000: a review), and each
    wake during a burst started another chain of slices (they piled up)."""
    store = Counting()
    sender = store.connect()
    for n in range(40):
        sender.submit_request(Op.PAUSE, n + 1, None, NOW)
    clock, turns = FakeClock(NOW), list[str]()
    inbox = _inbox(store, clock, turns)
    inbox.start()
    late = None
    for turn in range(30):
        if turn == 2:  # another process files one more while the burst goes on
            late = sender.submit_request(Op.PAUSE, 99, None, NOW)
            inbox.check()
        pending, turns[:] = turns.count("later"), []
        assert pending <= 1  # one chain of slices, whatever woke the inbox
        if not pending:
            break
        inbox.perform_open()
    assert late is not None and sender.request_outcome(late)[0]
    assert store.open_requests() == []
    assert store.reads == 1 + 1 + 1  # the burst, the news after it, and this look


def test_a_store_failing_mid_burst_loses_no_request() -> None:
    store = Counting()
    sender = store.connect()
    ids = [sender.submit_request(Op.PAUSE, n + 1, None, NOW) for n in range(12)]
    clock, turns = FakeClock(NOW), list[str]()
    inbox = _inbox(store, clock, turns)
    inbox.perform_open()
    store.fail_next_write = True
    inbox.perform_open()
    assert any(turn.startswith("failed: the disk is full") for turn in turns)
    for _ in range(20):  # the service retries once the store works again
        inbox.perform_open()
    assert all(sender.request_outcome(i)[0] for i in ids)


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
