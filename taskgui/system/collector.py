"""CPython's cyclic garbage collector and a schedule: held off while a big load builds
its objects (``collector_paused``), kept off the loaded schedule (``freeze_loaded``), and
run on the main thread only (``collect_on_main_thread``, ``collect_due``).
The one place taskgui tells the collector anything.

Why the main thread only: CPython collects on whichever thread crosses its allocation
threshold. A cycle that holds a Qt object (a widget and a lambda slot that names it,
say) is then freed on a worker or the service thread, and Qt objects destroyed off
their thread crash the process, later and somewhere else (seen here in the tests, and
known from calibre, pyqtgraph and napari). The window and the daemon therefore turn
automatic collection off and collect from a timer on the main thread
(``runtime.main_thread_collector``), doing what the automatic collector would have done.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_COLLECT_AFTER = 100_000  # new tracked objects: about 25,000 tasks


class _MainThreadCollection:
    """Whether a main-thread timer collects, and what it was asked for meanwhile."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.on = False
        self.holds = 0  # loads in progress (collector_paused), on any thread
        self.full_pass_wanted = False


_main = _MainThreadCollection()


def collect_on_main_thread() -> None:
    """From now on only ``collect_due`` collects (called on the main thread, by a timer)."""
    with _main.lock:
        _main.on = True
    gc.disable()


def collect_automatically() -> None:
    """Back to CPython's automatic collection (a window or daemon that has stopped)."""
    with _main.lock:
        _main.on = False
        _main.full_pass_wanted = False
    gc.enable()


def collect_due() -> int:
    """Collect what CPython's automatic collector would collect now; call on the main
    thread. Nothing while a load holds the collector off; after a big load, one full
    pass (see ``collector_paused``). Returns the number of unreachable objects found."""
    with _main.lock:
        if _main.holds:
            return 0
        full, _main.full_pass_wanted = _main.full_pass_wanted, False
    if full:
        return gc.collect()
    counts = gc.get_count()
    thresholds = gc.get_threshold()
    if counts[0] <= thresholds[0]:
        return 0
    # As CPython chooses: the oldest generation whose count has passed its threshold.
    generation = 0
    for candidate in (2, 1):
        if thresholds[candidate] and counts[candidate] >= thresholds[candidate]:
            generation = candidate
            break
    return gc.collect(generation)


@contextmanager
def collector_paused() -> Iterator[None]:
    """Hold off CPython's cyclic garbage collector while a load builds its objects.

    Loading 100,000 tasks allocates about half a million tracked objects, none of them
    in a cycle; with the collector on, its full passes walk the whole growing heap
    again and again, which cost a fifth of a cold start. Restored on the way out, error
    or not. Other threads keep allocating meanwhile; their garbage waits for the pass
    at the end.
    """
    with _main.lock:
        main_thread_only = _main.on
        if main_thread_only:
            _main.holds += 1
    if main_thread_only:
        try:
            yield
        finally:
            with _main.lock:
                _main.holds -= 1
                if gc.get_count()[0] >= _COLLECT_AFTER:
                    _main.full_pass_wanted = True  # this thread may not be the main one
        return
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        # After a big load, one full pass now moves the new objects (all long-lived)
        # to the oldest generation in one go; left to itself the collector would find
        # them through each younger generation in turn while the engine loads (three
        # passes over them, not one). After a small load, that pass over the whole
        # heap would cost more than it saves.
        if gc.get_count()[0] >= _COLLECT_AFTER:
            gc.collect()
        gc.enable()


def freeze_loaded() -> None:
    """Once every stored task is in memory: move it all out of the collector's reach.

    The schedule lives as long as the process; left in reach, each full collection
    walks every task again (~0.1 s at 100,000 tasks: a visible stall, and a late
    dispatch). What is allocated after this is collected as usual.
    """
    gc.freeze()
