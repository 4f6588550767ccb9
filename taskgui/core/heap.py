"""An indexed binary min-heap: a priority queue that can also find its items.

``heapq`` cannot remove or re-key an arbitrary item without a linear scan. This heap
keeps a map from item id to position, so remove and update are O(log n), peek is O(1)
and bulk loading with ``heapify`` is O(n). Keys must be unique and totally ordered;
callers end them with a sequence number so ties break deterministically (first in,
first out) and ids are never compared.

Hot path: written against plain lists and dicts with local-variable caching, because
every dispatch goes through it.
"""

from __future__ import annotations

import heapq
from collections.abc import Hashable, Iterable, Iterator
from typing import Any, Generic, TypeVar

IdT = TypeVar("IdT", bound=Hashable)
KeyT = TypeVar("KeyT", bound=Any)


class IndexedHeap(Generic[IdT, KeyT]):
    """Min-heap of ``(key, id)`` entries with an id -> position index."""

    __slots__ = ("_heap", "_pos")

    def __init__(self) -> None:
        self._heap: list[tuple[KeyT, IdT]] = []
        self._pos: dict[IdT, int] = {}

    def __len__(self) -> int:
        return len(self._heap)

    def __bool__(self) -> bool:
        return bool(self._heap)

    def __contains__(self, item_id: object) -> bool:
        return item_id in self._pos

    def __iter__(self) -> Iterator[IdT]:
        """Ids in heap-array order (not sorted); for inspection and tests."""
        return (item_id for _, item_id in self._heap)

    def key_of(self, item_id: IdT) -> KeyT:
        """The key an item is queued under. KeyError if absent."""
        return self._heap[self._pos[item_id]][0]

    def peek(self) -> tuple[IdT, KeyT]:
        """The smallest entry as ``(id, key)`` without removing it. IndexError if empty."""
        key, item_id = self._heap[0]
        return item_id, key

    def push(self, item_id: IdT, key: KeyT) -> None:
        """Add an item. KeyError if the id is already queued."""
        if item_id in self._pos:
            raise KeyError(f"{item_id!r} is already in the heap")
        heap = self._heap
        heap.append((key, item_id))
        self._sift_up(len(heap) - 1)

    def pop(self) -> tuple[IdT, KeyT]:
        """Remove and return the smallest entry as ``(id, key)``. IndexError if empty."""
        heap = self._heap
        last = heap.pop()
        if not heap:
            del self._pos[last[1]]
            return last[1], last[0]
        key, item_id = heap[0]
        del self._pos[item_id]
        heap[0] = last
        self._sift_down(0)
        return item_id, key

    def remove(self, item_id: IdT) -> KeyT:
        """Remove an item wherever it is; return its key. KeyError if absent."""
        pos = self._pos.pop(item_id)
        heap = self._heap
        key = heap[pos][0]
        last = heap.pop()
        if pos < len(heap):
            heap[pos] = last
            if last[0] < key:
                self._sift_up(pos)
            else:
                self._sift_down(pos)
        return key

    def discard(self, item_id: IdT) -> bool:
        """Remove an item if present; return whether it was."""
        if item_id not in self._pos:
            return False
        self.remove(item_id)
        return True

    def update(self, item_id: IdT, key: KeyT) -> None:
        """Give a queued item a new key and restore heap order. KeyError if absent."""
        pos = self._pos[item_id]
        heap = self._heap
        old = heap[pos][0]
        heap[pos] = (key, item_id)
        if key < old:
            self._sift_up(pos)
        else:
            self._sift_down(pos)

    def heapify(self, items: Iterable[tuple[IdT, KeyT]]) -> None:
        """Replace the contents with ``items`` in O(n). ValueError on a duplicate id."""
        heap = [(key, item_id) for item_id, key in items]
        # heapq's bottom-up heapify is O(n) and runs in C; keys are unique, so the
        # tuples never fall through to comparing ids.
        heapq.heapify(heap)
        pos = {item_id: index for index, (_, item_id) in enumerate(heap)}
        if len(pos) != len(heap):
            raise ValueError("duplicate ids given to heapify")
        self._heap = heap
        self._pos = pos

    def clear(self) -> None:
        self._heap.clear()
        self._pos.clear()

    def _sift_up(self, pos: int) -> None:
        heap = self._heap
        index = self._pos
        entry = heap[pos]
        key = entry[0]
        while pos > 0:
            parent_pos = (pos - 1) >> 1
            parent = heap[parent_pos]
            if key < parent[0]:
                heap[pos] = parent
                index[parent[1]] = pos
                pos = parent_pos
            else:
                break
        heap[pos] = entry
        index[entry[1]] = pos

    def _sift_down(self, pos: int) -> None:
        heap = self._heap
        index = self._pos
        size = len(heap)
        entry = heap[pos]
        key = entry[0]
        child = 2 * pos + 1
        while child < size:
            right = child + 1
            if right < size and heap[right][0] < heap[child][0]:
                child = right
            smaller = heap[child]
            if smaller[0] < key:
                heap[pos] = smaller
                index[smaller[1]] = pos
                pos = child
                child = 2 * pos + 1
            else:
                break
        heap[pos] = entry
        index[entry[1]] = pos
