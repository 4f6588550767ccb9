"""The window's and the daemon's garbage collector runs on the main thread only: a
cycle made garbage and a worker thread that allocates past CPython's threshold leave
the cycle for the main thread's timer, as a cycle holding a Qt object must be."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from typing import ClassVar

import pytest
from pytestqt.qtbot import QtBot

from taskgui.runtime.main_thread_collector import MainThreadCollector
from taskgui.system import collector


class _Cycle:
    """Half of a reference cycle that says on which thread it was freed."""

    freed_on: ClassVar[list[int]] = []

    def __init__(self) -> None:
        self.partner: object = self

    def __del__(self) -> None:
        _Cycle.freed_on.append(threading.get_ident())


@pytest.fixture
def main_thread_collection(qtbot: QtBot) -> Iterator[MainThreadCollector]:
    _Cycle.freed_on = []
    gc.collect()
    running = MainThreadCollector(interval_ms=20)
    running.start()
    yield running
    running.stop()
    running.deleteLater()


def _garbage_then_allocate_on_a_worker() -> None:
    def work() -> None:
        _Cycle()  # unreachable at once, but only the cyclic collector can free it
        for _ in range(5_000):  # more garbage, far past CPython's threshold (700)
            garbage: list[object] = []
            garbage.append(garbage)

    worker = threading.Thread(target=work)
    worker.start()
    worker.join(10)


def test_a_cycle_made_on_a_worker_is_freed_on_the_main_thread(
    qtbot: QtBot, main_thread_collection: MainThreadCollector
) -> None:
    assert not gc.isenabled()
    _garbage_then_allocate_on_a_worker()
    assert _Cycle.freed_on == []  # the worker's allocations collected nothing
    qtbot.waitUntil(lambda: _Cycle.freed_on != [], timeout=5_000)
    assert _Cycle.freed_on == [threading.get_ident()]


def test_without_it_the_worker_would_have_freed_it() -> None:
    """The case above, with CPython collecting by itself: the hazard is real here."""
    _Cycle.freed_on = []
    gc.collect()
    assert gc.isenabled()
    _garbage_then_allocate_on_a_worker()
    assert _Cycle.freed_on and _Cycle.freed_on[0] != threading.get_ident()


def test_a_load_in_progress_holds_it_off_then_it_collects(
    qtbot: QtBot, main_thread_collection: MainThreadCollector
) -> None:
    with collector.collector_paused():
        _Cycle()
        assert collector.collect_due() == 0  # held off, whatever the counts say
        assert _Cycle.freed_on == []
        kept = [[index] for index in range(110_000)]  # a big load's new objects
    qtbot.waitUntil(lambda: _Cycle.freed_on != [], timeout=5_000)
    assert _Cycle.freed_on == [threading.get_ident()]
    del kept


def test_stopping_gives_collection_back_to_cpython(qtbot: QtBot) -> None:
    running = MainThreadCollector()
    running.start()
    assert not gc.isenabled()
    running.stop()
    assert gc.isenabled()
    with collector.collector_paused():
        assert not gc.isenabled()  # the old way: off while the load builds
    assert gc.isenabled()
