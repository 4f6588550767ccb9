"""The time queue: tasks not yet due, keyed ``(run_at, seq)``, behind one protocol.

Two implementations pass the same model test and the engine's whole suite: the
indexed binary heap (``heap.IndexedHeap``) and a hierarchical hashed timing wheel
(``wheel.TimingWheel``), whose schedule and cancel are O(1). Both answer the head
exactly, to the microsecond of the key, because the service arms its two-stage timer
from it. ``DEFAULT_TIME_QUEUE`` is the one the figures chose (see the README's
benchmark table and ``benchmarks/bench_time_queue.py``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Protocol

from taskgui.core.engine.heap import IndexedHeap
from taskgui.core.engine.wheel import TimingWheel
from taskgui.core.task import TaskId

# (run at, in epoch seconds; a sequence number that breaks ties first in, first out).
TimeKey = tuple[float, int]


class TimeQueue(Protocol):
    """A priority queue of task ids by ``TimeKey`` that can also find its items.

    Keys are unique (the seq sees to it); ids are never compared. Errors as a dict's
    and a heap's: KeyError for an id that is absent (or already queued, on push),
    IndexError for the head of an empty queue, ValueError for a duplicate id given
    to ``heapify``.
    """

    def __len__(self) -> int: ...
    def __bool__(self) -> bool: ...
    def __contains__(self, item_id: object) -> bool: ...
    def __iter__(self) -> Iterator[TaskId]:
        """The queued ids in no particular order."""
        ...

    def key_of(self, item_id: TaskId) -> TimeKey: ...
    def peek(self) -> tuple[TaskId, TimeKey]:
        """The earliest entry, exactly, without removing it."""
        ...

    def pop(self) -> tuple[TaskId, TimeKey]: ...
    def pop_at_most(self, bound: TimeKey) -> tuple[TaskId, TimeKey] | None:
        """``pop`` if the earliest key is ``<= bound``, else None (also when empty)."""
        ...

    def push(self, item_id: TaskId, key: TimeKey) -> None: ...
    def discard(self, item_id: TaskId) -> bool:
        """Remove an item if queued; whether it was."""
        ...

    def update(self, item_id: TaskId, key: TimeKey) -> None: ...
    def heapify(self, items: Iterable[tuple[TaskId, TimeKey]]) -> None:
        """Replace the contents in O(n) (the name is the heap's)."""
        ...

    def ids_with_key_at_most(self, bound: TimeKey) -> list[TaskId]:
        """Ids whose key is ``<= bound``, in no order, without removing them."""
        ...

    def clear(self) -> None: ...


TimeQueueFactory = Callable[[], TimeQueue]

QUEUES: dict[str, TimeQueueFactory] = {"heap": IndexedHeap, "wheel": TimingWheel}
# "auto" picks by size when a schedule is loaded (a cold start): the heap below
# WHEEL_FROM queued tasks, the wheel from there on. ``benchmarks/bench_time_queue.py``
# chose it (the README's table): at 100k pending the wheel ran the pop-heavy workloads
# (hold, cancel-heavy, a 10,000/s schedule rate) in 0.32-0.67x of the heap's time in
# the same run, at 1M in 0.24-0.36x, and lost only the build (1.45x, 2.2x); at 10k it
# won cancel-heavy and rate but lost build, push and cancel, so the heap stays there.
# A schedule that grows past it by adds keeps its queue until the next start.
AUTO = "auto"
DEFAULT_TIME_QUEUE = AUTO
WHEEL_FROM = 50_000
NAMES = (AUTO, *sorted(QUEUES))


def resolve(name: str | None, size: int) -> str:
    """The queue ``name`` stands for with ``size`` tasks queued (None: the default).
    ValueError for a name that is none of ``NAMES``."""
    chosen = DEFAULT_TIME_QUEUE if name is None else name
    if chosen == AUTO:
        return "wheel" if size >= WHEEL_FROM else "heap"
    if chosen not in QUEUES:
        raise ValueError(f"unknown time queue {chosen!r}; choose one of {', '.join(NAMES)}")
    return chosen


def new_time_queue(kind: str) -> TimeQueue:
    """An empty queue of a resolved kind (see ``resolve``)."""
    return QUEUES[kind]()
