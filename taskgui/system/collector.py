"""CPython's cyclic garbage collector and a schedule: held off while a big load builds
its objects (``collector_paused``), and kept off the loaded schedule (``freeze_loaded``).
The one place taskgui tells the collector anything."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

_COLLECT_AFTER = 100_000  # new tracked objects: about 25,000 tasks


# Holds taken by ``hold`` and ``collector_paused``, on the thread that owns the Qt
# objects (the GUI thread) only: the collector is back on when the last one goes.
_holds: list[bool] = []  # each: whether the collector was on when it was taken


def hold() -> None:
    """Hold the cyclic collector off until ``release``: while a plain worker thread
    allocates a lot (a window's start reading every task), a collection it set off
    would free whatever cyclic garbage the GUI thread left, Qt objects among it, on
    that worker thread, and a Qt object freed there crashes the process. Call from
    the GUI thread, never from the worker."""
    _holds.append(gc.isenabled())
    gc.disable()


def release() -> None:
    """Undo one ``hold``; the last one turns the collector back on (if it was on)."""
    if not _holds:
        return
    was_on = _holds[0]
    _holds.pop()
    if _holds or not was_on:
        return
    # After a big load, one full pass now moves the new objects (all long-lived) to
    # the oldest generation in one go; left to itself the collector would find them
    # through each younger generation in turn (three passes over them, not one).
    # After a small load, that pass over the whole heap would cost more than it saves.
    if gc.get_count()[0] >= _COLLECT_AFTER:
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
