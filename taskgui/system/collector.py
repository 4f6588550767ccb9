"""CPython's cyclic garbage collector and a schedule: held off while a big load builds
its objects (``hold``, ``collector_paused``), kept off the loaded schedule
(``freeze_loaded``), and run on the main thread only (``collect_on_main_thread``,
``collect_due``). The one place taskgui tells the collector anything.

Why the main thread only: CPython collects on whichever thread crosses its allocation
threshold. A cycle that holds a Qt object (a widget and a lambda slot that names it,
say) is then freed on a worker or the service thread, and Qt objects destroyed off
their thread crash the process, later and somewhere else (seen here in the tests, and
known from calibre, pyqtgraph and napari). The window and the daemons therefore turn
automatic collection off and collect from a timer on the main thread
(``runtime.main_thread_collector``), doing what the automatic collector would have done.
Where that timer does not run (tests, the CLI), ``hold`` still keeps a worker's big
load from setting a collection off.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_COLLECT_AFTER = 100_000  # new tracked objects: about 25,000 tasks


class _Collection:
    """Who collects now, and the holds taken meanwhile (from any thread: a lock)."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.main_thread_only = False  # a main-thread timer collects (collect_due)
        self.holds: list[bool] = []  # each: whether the collector was on when taken
        self.full_pass_wanted = False


_state = _Collection()


def collect_on_main_thread() -> None:
    """From now on only ``collect_due`` collects (called on the main thread, by a timer)."""
    with _state.lock:
        _state.main_thread_only = True
        _state.holds = [False for _ in _state.holds]  # a release must not turn it on
    gc.disable()


def collect_automatically() -> None:
    """Back to CPython's automatic collection (a window or daemon that has stopped)."""
    with _state.lock:
        _state.main_thread_only = False
        _state.full_pass_wanted = False
        held = bool(_state.holds)
    if not held:
        gc.enable()


def collect_due() -> int:
    """Collect what CPython's automatic collector would collect now; call on the main
    thread. Nothing while a hold is taken; after a big load, one full pass (see
    ``release``). Returns the number of unreachable objects found."""
    with _state.lock:
        if _state.holds:
            return 0
        full, _state.full_pass_wanted = _state.full_pass_wanted, False
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


def hold() -> None:
    """Hold the cyclic collector off until ``release``: while a big load builds its
    objects, and while a plain worker thread allocates a lot (a window's start reading
    every task), where a collection it set off would free the GUI thread's cyclic
    garbage, Qt objects among it, on that worker thread."""
    with _state.lock:
        _state.holds.append(gc.isenabled() and not _state.main_thread_only)
    gc.disable()


def release() -> None:
    """Undo one ``hold``; the last one lets the collector go on."""
    with _state.lock:
        if not _state.holds:
            return
        was_on = _state.holds[0]
        _state.holds.pop()
        if _state.holds:
            return
        big = gc.get_count()[0] >= _COLLECT_AFTER
        if _state.main_thread_only:
            # This thread may not be the main one: the timer makes the pass.
            _state.full_pass_wanted = big
            return
    if not was_on:
        return
    # After a big load, one full pass now moves the new objects (all long-lived) to
    # the oldest generation in one go; left to itself the collector would find them
    # through each younger generation in turn (three passes over them, not one).
    # After a small load, that pass over the whole heap would cost more than it saves.
    if big:
        gc.collect()
    gc.enable()


@contextmanager
def collector_paused() -> Iterator[None]:
    """Hold off CPython's cyclic garbage collector while a load builds its objects.

    Loading 100,000 tasks allocates about half a million tracked objects, none of them
    in a cycle; with the collector on, its full passes walk the whole growing heap
    again and again, which cost a fifth of a cold start. Restored on the way out, error
    or not (unless a ``hold`` is still taken). Other threads keep allocating meanwhile;
    their garbage waits for the pass at the end.
    """
    hold()
    try:
        yield
    finally:
        release()


def freeze_loaded() -> None:
    """Once every stored task is in memory: move it all out of the collector's reach.

    The schedule lives as long as the process; left in reach, each full collection
    walks every task again (~0.1 s at 100,000 tasks: a visible stall, and a late
    dispatch). What is allocated after this is collected as usual.
    """
    gc.freeze()
