"""The service wakes on the change feed, not on a timer (runtime/feed_watch.py).

Each test here sets the safety poll to a minute, so a request taken within seconds
was taken because the feed woke the service: SQLite through its watched files, the
memory store through its descriptor. Waits are conditions with timeouts.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from taskgui.core.operation import Op
from taskgui.runtime import feed_watch
from taskgui.runtime.feed_watch import FeedWatch
from taskgui.runtime.service import SchedulerService
from taskgui.store.memory import MemoryRepository
from taskgui.store.sqlite.repository import SqliteRepository
from tests.helpers.processes import ROOT
from tests.helpers.service import CLOCK, Harness, spec

PROMPTLY_MS = 3_000  # far below the minute of the safety poll, far above a wake

SUBMIT = """
import sys
from datetime import datetime, timezone
from pathlib import Path
from taskgui.store.sqlite.repository import SqliteRepository
repository = SqliteRepository(Path(sys.argv[1]))
print(repository.submit_request("pause", int(sys.argv[2]), None, datetime.now(timezone.utc)))
repository.close()
"""


@pytest.fixture(autouse=True)
def no_safety_poll(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(feed_watch, "SAFETY_POLL_MS", 60_000)


@pytest.fixture
def harness(tmp_path: Path, qtbot: QtBot) -> Iterator[Harness]:
    opened = Harness(tmp_path, qtbot, workers=1)
    yield opened
    opened.close()


def later() -> object:
    return spec("later", "true", first_run_at=CLOCK.now() + timedelta(hours=1))


def test_a_request_from_another_process_is_taken_promptly(
    harness: Harness, qtbot: QtBot, tmp_path: Path
) -> None:
    task = harness.service.add_task(later())  # type: ignore[arg-type]
    assert harness.service.feed_watch.woken_by == "files"
    submitted = subprocess.run(
        [sys.executable, "-c", SUBMIT, str(tmp_path / "service.sqlite3"), str(task.id)],
        capture_output=True,
        text=True,
        check=True,
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=30,
    )
    request_id = int(submitted.stdout)
    qtbot.waitUntil(lambda: harness.service.task(task.id).spec.paused, timeout=PROMPTLY_MS)
    assert harness.repository.request_outcome(request_id) == (True, None)


def test_a_burst_of_its_own_commits_costs_few_looks(harness: Harness, qtbot: QtBot) -> None:
    watch = harness.service.feed_watch
    qtbot.waitUntil(lambda: not watch._soon.isActive(), timeout=PROMPTLY_MS)
    looks = watch.looks
    for _ in range(50):
        harness.service.add_task(later())  # type: ignore[arg-type]
    qtbot.wait(50)  # let the wakes the -wal writes caused arrive and be coalesced
    assert watch.looks - looks <= 3
    sender = SqliteRepository(harness.tmp_path / "service.sqlite3")
    try:  # and a request after them is still taken
        task = harness.service.snapshot()[0]
        sender.submit_request(Op.PAUSE, task.id, None, CLOCK.now())
        qtbot.waitUntil(lambda: harness.service.task(task.id).spec.paused, timeout=PROMPTLY_MS)
    finally:
        sender.close()


def test_a_deleted_wal_is_noticed_at_once(harness: Harness, qtbot: QtBot) -> None:
    """Deleting the -wal stops the schedule (store_lost): the watch saw it go."""
    wal = harness.tmp_path / "service.sqlite3-wal"
    with qtbot.waitSignal(harness.service.store_lost, timeout=PROMPTLY_MS):
        wal.unlink()


def test_over_the_memory_store_its_descriptor_wakes_the_service(qtbot: QtBot) -> None:
    store = MemoryRepository()
    service = SchedulerService(store, CLOCK, workers=1, kill_grace=0.3)
    service.start()
    try:
        assert service.feed_watch.woken_by == "descriptor"
        task = service.add_task(later())  # type: ignore[arg-type]
        sender = store.connect()
        sender.submit_request(Op.PAUSE, task.id, None, CLOCK.now())
        qtbot.waitUntil(lambda: service.task(task.id).spec.paused, timeout=PROMPTLY_MS)
    finally:
        with qtbot.waitSignal(service.stopped, timeout=10_000):
            service.shutdown(grace=0.0)
        store.close()


class _Silent:
    """A feed with no way to wake anybody (a backend that can only be asked)."""

    def __init__(self) -> None:
        self.asked = 0

    def changed(self) -> bool:
        self.asked += 1
        return False

    def fileno(self) -> int | None:
        return None

    def watch_paths(self) -> tuple[str, ...]:
        return ()


def test_a_feed_that_cannot_wake_is_asked_at_the_old_pace(qtbot: QtBot) -> None:
    feed = _Silent()

    def look() -> None:
        feed.changed()

    watch = FeedWatch(feed, look, fallback_ms=20)
    watch.start()
    try:
        assert watch.woken_by == "timer"
        qtbot.waitUntil(lambda: feed.asked >= 3, timeout=PROMPTLY_MS)
    finally:
        watch.stop()
    asked = feed.asked
    qtbot.wait(60)
    assert feed.asked == asked  # stopped means stopped
