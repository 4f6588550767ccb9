"""A hierarchical hashed timing wheel whose head is exact.

Netty's ``HashedWheelTimer`` and Kafka's purgatory (its ``TimingWheel``) put each timer
in a bucket by its deadline, so scheduling and cancelling are O(1) dictionary work;
a coarser wheel above takes deadlines too far for the finer one, and Kafka keeps the
non-empty buckets in a delay queue so that empty ones are never ticked through. Both
fire a timer somewhere within its bucket's tick: fine for request timeouts, not for
a scheduler that arms its two-stage timer to the microsecond. So this wheel only
buckets *far* deadlines. A bucket whose time comes is emptied into a small exact heap
(the near heap), and the head is always read from there only once no bucket can hold
anything earlier: the earliest entry is exactly what a single heap would give.

Layout. Level k has buckets ``TICK * 64**k`` seconds wide (``TICK`` is a power of two,
so bucket boundaries are exact in binary floating point and no item is ever before
its bucket's start). A deadline goes to the lowest level where it is fewer than 64
buckets ahead of the horizon (the end of what was last emptied into the near heap);
one already behind the horizon goes to the near heap. The buckets are dicts id -> key
held in one dict by bucket id; a small heap of their start times says which comes
next (Kafka's delay queue), so a gap of a year costs no ticking.

Reading the head: while the near heap is empty, or its head is not strictly before
the earliest bucket's start, that bucket is emptied: into the near heap at level 0,
or one level down or more (cascaded) above. An item therefore moves at most once per
level, and one cancelled before its bucket's time (a timeout, a rescheduled task)
never touches a heap at all.

Invariants: every bucketed item's time is >= its bucket's start; an id is in exactly
one of the near heap and the buckets, and ``_where`` maps each bucketed id to its
bucket; every bucket has exactly one entry in ``_starts``.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Hashable, Iterable, Iterator
from itertools import chain
from typing import Generic, TypeVar

from taskgui.core.engine.heap import IndexedHeap

IdT = TypeVar("IdT", bound=Hashable)
Key = tuple[float, int]

TICK = 1.0  # seconds: level 0's bucket width; a power of two (see the docstring)
_TICKS_PER_SECOND = 1.0
_FANOUT_BITS = 6  # 64 buckets a level
_LEVELS = 12  # TICK * 64**11 is about 2e12 years: every datetime fits
_LEVEL_BITS = 4  # a bucket id is (index << 4) | level
_LEVEL_MASK = (1 << _LEVEL_BITS) - 1
_WIDTHS = tuple(TICK * (1 << (_FANOUT_BITS * level)) for level in range(_LEVELS))
# The level of a deadline ``ticks`` ahead, by ``ticks.bit_length()``: fewer than 64
# ticks is level 0, fewer than 64**2 level 1, ... (a table: this runs on every push).
_LEVEL_BY_BITS = tuple(min(_LEVELS - 1, max(0, (bits - 1) // _FANOUT_BITS)) for bits in range(1100))


class TimingWheel(Generic[IdT]):
    """A time queue of ``(seconds, seq)`` keys; see the module docstring."""

    __slots__ = ("_buckets", "_horizon", "_near", "_starts", "_where")

    def __init__(self) -> None:
        self._near: IndexedHeap[IdT, Key] = IndexedHeap()
        self._buckets: dict[int, dict[IdT, Key]] = {}
        self._where: dict[IdT, int] = {}
        self._starts: list[tuple[float, int]] = []
        self._horizon = -math.inf

    def __len__(self) -> int:
        return len(self._near) + len(self._where)

    def __bool__(self) -> bool:
        return bool(self._where) or bool(self._near)

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._where or item_id in self._near

    def __iter__(self) -> Iterator[IdT]:
        """Ids in no particular order; for inspection and tests."""
        return chain(iter(self._near), list(self._where))

    def key_of(self, item_id: IdT) -> Key:
        """The key an item is queued under. KeyError if absent."""
        bucket_id = self._where.get(item_id)
        if bucket_id is None:
            return self._near.key_of(item_id)
        return self._buckets[bucket_id][item_id]

    def peek(self) -> tuple[IdT, Key]:
        """The earliest entry, exactly, without removing it. IndexError if empty."""
        starts = self._starts
        if starts:
            near = self._near
            if not near or near.peek()[1][0] >= starts[0][0]:
                self._advance()
        return self._near.peek()

    def pop(self) -> tuple[IdT, Key]:
        """Remove and return the earliest entry. IndexError if empty."""
        starts = self._starts
        if starts:
            near = self._near
            if not near or near.peek()[1][0] >= starts[0][0]:
                self._advance()
        return self._near.pop()

    def pop_at_most(self, bound: Key) -> tuple[IdT, Key] | None:
        """``pop`` if the earliest key is ``<= bound``, else None (also when empty)."""
        starts = self._starts
        if starts:
            near = self._near
            if not near or near.peek()[1][0] >= starts[0][0]:
                self._advance()
        return self._near.pop_at_most(bound)

    def push(self, item_id: IdT, key: Key) -> None:
        """Add an item, in O(1) unless it is due before the horizon. KeyError if the
        id is already queued."""
        where = self._where
        if item_id in where or item_id in self._near:
            raise KeyError(f"{item_id!r} is already queued")
        if not where and not self._near:
            # Empty: start the horizon here, so a first deadline lands in level 0
            # rather than cascading down from the top.
            self._buckets.clear()
            self._starts.clear()
            self._horizon = key[0]
        self._place(item_id, key)

    def discard(self, item_id: IdT) -> bool:
        """Remove an item if queued, in O(1); return whether it was. A bucket left
        empty stays until its time, when emptying it costs nothing."""
        bucket_id = self._where.pop(item_id, None)
        if bucket_id is None:
            return self._near.discard(item_id)
        del self._buckets[bucket_id][item_id]
        return True

    def update(self, item_id: IdT, key: Key) -> None:
        """Give a queued item a new key. KeyError if absent."""
        if not self.discard(item_id):
            raise KeyError(item_id)
        self._place(item_id, key)

    def heapify(self, items: Iterable[tuple[IdT, Key]]) -> None:
        """Replace the contents with ``items`` in O(n). ValueError on a duplicate id
        (leaving the contents as they were)."""
        listed = list(items)
        if len({item_id for item_id, _ in listed}) != len(listed):
            raise ValueError("duplicate ids given to heapify")
        self.clear()
        if not listed:
            return
        # ``_place`` inlined, and each bucket's start pushed once, by one heapify: a
        # cold start of a large schedule is this loop.
        horizon = self._horizon = min(key[0] for _, key in listed)
        buckets = self._buckets
        where = self._where
        level_by_bits, widths = _LEVEL_BY_BITS, _WIDTHS
        for item_id, key in listed:
            at = key[0]
            level = level_by_bits[int((at - horizon) * _TICKS_PER_SECOND).bit_length()]
            bucket_id = (int(at // widths[level]) << _LEVEL_BITS) | level
            bucket = buckets.get(bucket_id)
            if bucket is None:
                bucket = buckets[bucket_id] = {}
            bucket[item_id] = key
            where[item_id] = bucket_id
        self._starts = [
            ((bucket_id >> _LEVEL_BITS) * widths[bucket_id & _LEVEL_MASK], bucket_id)
            for bucket_id in buckets
        ]
        heapq.heapify(self._starts)

    def ids_with_key_at_most(self, bound: Key) -> list[IdT]:
        """Ids whose key is ``<= bound``, in no particular order, without removing
        them: the near heap's, and those of every bucket starting at or before it."""
        found = self._near.ids_with_key_at_most(bound)
        limit = bound[0]
        buckets = self._buckets
        for start, bucket_id in self._starts:
            if start <= limit:
                found.extend(item_id for item_id, key in buckets[bucket_id].items() if key <= bound)
        return found

    def clear(self) -> None:
        self._near.clear()
        self._buckets.clear()
        self._where.clear()
        self._starts.clear()
        self._horizon = -math.inf

    # ------------------------------------------------------------- internals

    def _place(self, item_id: IdT, key: Key) -> None:
        """Put an item in the near heap if it is behind the horizon, else in the
        bucket of the lowest level it is fewer than 64 buckets ahead at."""
        at = key[0]
        horizon = self._horizon
        if at < horizon:
            self._near.push(item_id, key)
            return
        level = _LEVEL_BY_BITS[int((at - horizon) * _TICKS_PER_SECOND).bit_length()]
        width = _WIDTHS[level]
        index = at // width
        bucket_id = (int(index) << _LEVEL_BITS) | level
        buckets = self._buckets
        bucket = buckets.get(bucket_id)
        if bucket is None:
            bucket = buckets[bucket_id] = {}
            heapq.heappush(self._starts, (index * width, bucket_id))
        bucket[item_id] = key
        self._where[item_id] = bucket_id

    def _advance(self) -> None:
        """Empty buckets, earliest first, until the near heap's head is strictly
        before every bucket's start (then no bucket can hold anything earlier)."""
        starts = self._starts
        near = self._near
        buckets = self._buckets
        where = self._where
        place = self._place
        while starts and (not near or near.peek()[1][0] >= starts[0][0]):
            start, bucket_id = heapq.heappop(starts)
            bucket = buckets.pop(bucket_id)
            if not bucket:
                continue
            for item_id in bucket:
                del where[item_id]
            level = bucket_id & _LEVEL_MASK
            if level == 0:
                end = start + TICK
                self._horizon = max(self._horizon, end)
                if near:
                    for item_id, key in bucket.items():
                        near.push(item_id, key)
                else:
                    near.heapify(bucket.items())
            else:
                # Cascade: every item is less than this level's width past ``start``,
                # so from a horizon at ``start`` it lands at a lower level.
                self._horizon = max(self._horizon, start)
                for item_id, key in bucket.items():
                    place(item_id, key)
