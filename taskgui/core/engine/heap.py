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


class _Dead:
    """Marks an entry that ``discard`` removed lazily; never a real id."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "<dead>"


DEAD: Any = _Dead()
# Compact when dead entries are more than half the array (and not trivially few).
_COMPACT_MIN = 64


class IndexedHeap(Generic[IdT, KeyT]):
    """Min-heap of ``(key, id)`` entries with an id -> position index.

    ``discard`` is lazy: it drops the id from the index and marks its entry ``DEAD``
    in place (O(1), no sifting); marked entries are skipped when they reach the top
    and swept out when they outnumber the live ones. Cancelling a task is a discard,
    and at 100,000 entries an eager removal costs several cache misses per level.
    ``remove`` stays eager because it returns the key.
    """

    __slots__ = ("_dead", "_heap", "_pos")

    def __init__(self) -> None:
        self._heap: list[tuple[KeyT, IdT]] = []
        self._pos: dict[IdT, int] = {}
        self._dead = 0

    def __len__(self) -> int:
        return len(self._heap) - self._dead

    def __bool__(self) -> bool:
        return len(self._heap) > self._dead

    def __contains__(self, item_id: object) -> bool:
        return item_id is not DEAD and item_id in self._pos

    def __iter__(self) -> Iterator[IdT]:
        """Ids in heap-array order (not sorted); for inspection and tests."""
        return (item_id for _, item_id in self._heap if item_id is not DEAD)

    def key_of(self, item_id: IdT) -> KeyT:
        """The key an item is queued under. KeyError if absent."""
        return self._heap[self._pos[item_id]][0]

    def peek(self) -> tuple[IdT, KeyT]:
        """The smallest entry as ``(id, key)`` without removing it. IndexError if empty."""
        if self._dead:
            self._drop_dead_top()
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
        if self._dead:
            self._drop_dead_top()
        heap = self._heap
        last = heap.pop()
        if not heap:
            del self._pos[last[1]]
            return last[1], last[0]
        key, item_id = heap[0]
        del self._pos[item_id]
        heap[0] = last
        self._sift_to_leaf()
        return item_id, key

    def pop_at_most(self, bound: KeyT) -> tuple[IdT, KeyT] | None:
        """``pop`` if the smallest key is ``<= bound``, else None (also when empty).

        One check where a loop over what is due would make two more calls (``bool``
        and ``peek``): the engine's ``due`` runs this for every task it takes.
        """
        if self._dead:
            self._drop_dead_top()
        heap = self._heap
        if not heap or heap[0][0] > bound:
            return None
        return self.pop()

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
        """Remove an item if present (lazily, see the class docstring); return whether it was."""
        if item_id is DEAD:
            return False
        pos = self._pos.pop(item_id, None)
        if pos is None:
            return False
        heap = self._heap
        heap[pos] = (heap[pos][0], DEAD)
        self._dead += 1
        if self._dead > _COMPACT_MIN and self._dead * 2 > len(heap):
            self._compact()
        return True

    def _drop_dead_top(self) -> None:
        heap = self._heap
        while heap and heap[0][1] is DEAD:
            last = heap.pop()
            self._dead -= 1
            if heap:
                heap[0] = last
                self._sift_to_leaf()
        self._pos.pop(DEAD, None)

    def _compact(self) -> None:
        live = [(key, item_id) for key, item_id in self._heap if item_id is not DEAD]
        heapq.heapify(live)
        self._heap = live
        self._pos = {item_id: index for index, (_, item_id) in enumerate(live)}
        self._dead = 0

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
        self._dead = 0

    def ids_with_key_at_most(self, bound: KeyT) -> list[IdT]:
        """Ids whose key is ``<= bound``, in no particular order, without removing them.

        O(k) for k such entries: the walk stops below any entry greater than
        ``bound``, since everything under it in the heap is greater still.
        """
        heap = self._heap
        size = len(heap)
        found: list[IdT] = []
        stack = [0] if heap else []
        while stack:
            pos = stack.pop()
            key, item_id = heap[pos]
            if key > bound:
                continue
            if item_id is not DEAD:
                found.append(item_id)
            child = 2 * pos + 1
            if child < size:
                stack.append(child)
                if child + 1 < size:
                    stack.append(child + 1)
        return found

    def clear(self) -> None:
        self._heap.clear()
        self._pos.clear()
        self._dead = 0

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

    def _sift_to_leaf(self) -> None:
        """Restore order after the last entry was put at the top (a pop): ``heapq``'s
        way. The smaller child moves up at every level down to a leaf, then the entry
        sifts up from there. The entry came from the bottom, so it belongs near the
        bottom again: this compares the two children once a level, where sifting down
        compares them and then the entry, twice; the ready heap pops a task on every
        dispatch."""
        heap = self._heap
        index = self._pos
        size = len(heap)
        entry = heap[0]
        pos = 0
        child = 1
        while child < size:
            right = child + 1
            if right < size and heap[right][0] < heap[child][0]:
                child = right
            smaller = heap[child]
            heap[pos] = smaller
            index[smaller[1]] = pos
            pos = child
            child = 2 * pos + 1
        heap[pos] = entry
        self._sift_up(pos)
