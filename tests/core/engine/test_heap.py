"""IndexedHeap: unit tests plus a stateful comparison against a naive model.

The model is a plain ``dict`` id -> key whose minimum is found by sorting. After every
step the state machine also checks the heap's internals: the heap property holds for
every parent/child pair and the index maps each id to the slot that really holds it.
"""

from __future__ import annotations

import heapq
import itertools
import random
from collections.abc import Hashable
from typing import Any, TypeVar

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import (
    RuleBasedStateMachine,
    invariant,
    precondition,
    rule,
)

from taskgui.core.engine.heap import DEAD, IndexedHeap

Key = tuple[int, int]
IdT = TypeVar("IdT", bound=Hashable)


def check_internals(heap: IndexedHeap[IdT, Any]) -> None:
    """Assert the heap property and that ``_pos`` is the exact inverse of ``_heap``."""
    entries = heap._heap
    positions = heap._pos
    for index in range(1, len(entries)):
        parent = (index - 1) // 2
        assert entries[parent][0] < entries[index][0], (
            f"heap property broken: slot {parent} {entries[parent]} > slot {index} {entries[index]}"
        )
    # Entries discarded lazily stay in the array, marked DEAD, until swept out.
    live = {item_id: index for index, (_key, item_id) in enumerate(entries) if item_id is not DEAD}
    indexed = {item_id: index for item_id, index in positions.items() if item_id is not DEAD}
    assert indexed == live, "the index is not the exact inverse of the live entries"
    assert len(entries) - len(live) == heap._dead, "the dead count is off"


def drain(heap: IndexedHeap[IdT, Key]) -> list[tuple[IdT, Key]]:
    out: list[tuple[IdT, Key]] = []
    while heap:
        out.append(heap.pop())
        check_internals(heap)
    return out


# ------------------------------------------------------------------ empty heap


def test_new_heap_is_empty() -> None:
    heap: IndexedHeap[int, Key] = IndexedHeap()
    assert len(heap) == 0
    assert not heap
    assert list(heap) == []
    assert 1 not in heap


def test_pop_on_empty_raises_index_error() -> None:
    heap: IndexedHeap[int, Key] = IndexedHeap()
    with pytest.raises(IndexError):
        heap.pop()


def test_peek_on_empty_raises_index_error() -> None:
    heap: IndexedHeap[int, Key] = IndexedHeap()
    with pytest.raises(IndexError):
        heap.peek()


def test_pop_and_peek_raise_again_after_draining() -> None:
    heap: IndexedHeap[int, Key] = IndexedHeap()
    heap.push(1, (5, 1))
    assert heap.pop() == (1, (5, 1))
    with pytest.raises(IndexError):
        heap.pop()
    with pytest.raises(IndexError):
        heap.peek()
    assert heap._pos == {}


# ----------------------------------------------------------- push / pop / peek


def test_pop_returns_items_in_key_order() -> None:
    heap: IndexedHeap[int, Key] = IndexedHeap()
    keys = [(7, 1), (3, 2), (9, 3), (1, 4), (5, 5), (3, 6), (8, 7)]
    for item_id, key in enumerate(keys):
        heap.push(item_id, key)
        check_internals(heap)
    assert len(heap) == len(keys)
    assert [key for _, key in drain(heap)] == sorted(keys)
    assert len(heap) == 0


def test_peek_does_not_remove() -> None:
    heap: IndexedHeap[str, Key] = IndexedHeap()
    heap.push("b", (2, 1))
    heap.push("a", (1, 2))
    assert heap.peek() == ("a", (1, 2))
    assert heap.peek() == ("a", (1, 2))
    assert len(heap) == 2
    assert heap.pop() == ("a", (1, 2))
    assert heap.peek() == ("b", (2, 1))


def test_duplicate_push_raises_key_error_and_keeps_the_original() -> None:
    heap: IndexedHeap[int, Key] = IndexedHeap()
    heap.push(1, (5, 1))
    heap.push(2, (6, 2))
    with pytest.raises(KeyError):
        heap.push(1, (0, 3))
    assert len(heap) == 2
    assert heap.key_of(1) == (5, 1)
    assert heap.peek() == (1, (5, 1))
    check_internals(heap)


def test_contains_key_of_and_iter() -> None:
    heap: IndexedHeap[int, Key] = IndexedHeap()
    for item_id in range(10):
        heap.push(item_id, (-item_id, item_id))
    assert all(item_id in heap for item_id in range(10))
    assert 10 not in heap
    assert "0" not in heap
    assert sorted(heap) == list(range(10))
    assert heap.key_of(4) == (-4, 4)
    with pytest.raises(KeyError):
        heap.key_of(99)


def test_fifo_tie_break_via_sequence_number() -> None:
    """Equal priorities come out in insertion order because the seq decides."""
    heap: IndexedHeap[str, Key] = IndexedHeap()
    seq = itertools.count()
    names = [f"task{i}" for i in range(20)]
    for name in names:
        heap.push(name, (0, next(seq)))
    heap.push("urgent", (-1, next(seq)))
    assert heap.pop()[0] == "urgent"
    assert [item_id for item_id, _ in drain(heap)] == names


def test_fifo_tie_break_survives_interleaved_priorities() -> None:
    heap: IndexedHeap[str, Key] = IndexedHeap()
    seq = itertools.count()
    order: dict[int, list[str]] = {}
    rng = random.Random(7)
    for i in range(200):
        priority = rng.choice([0, 1, 2])
        name = f"t{i}"
        heap.push(name, (priority, next(seq)))
        order.setdefault(priority, []).append(name)
    expected = order[0] + order[1] + order[2]
    assert [item_id for item_id, _ in drain(heap)] == expected


def test_ids_are_never_compared() -> None:
    """Unorderable ids work, because unique keys decide every comparison."""

    class Opaque:
        __slots__ = ()

    heap: IndexedHeap[Opaque, Key] = IndexedHeap()
    items = [Opaque() for _ in range(50)]
    for index, item in enumerate(items):
        heap.push(item, (index % 3, index))
    heap.update(items[10], (-1, 100))
    heap.remove(items[20])
    assert heap.pop()[0] is items[10]
    heap.heapify([(item, (0, index)) for index, item in enumerate(items)])
    assert heap.pop()[0] is items[0]


# ---------------------------------------------------------- remove / discard


def test_remove_returns_key_and_keeps_order() -> None:
    heap: IndexedHeap[int, Key] = IndexedHeap()
    rng = random.Random(1)
    keys = {item_id: (rng.randrange(100), item_id) for item_id in range(64)}
    for item_id, key in keys.items():
        heap.push(item_id, key)
    for item_id in rng.sample(sorted(keys), 32):
        assert heap.remove(item_id) == keys.pop(item_id)
        assert item_id not in heap
        check_internals(heap)
    assert [key for _, key in drain(heap)] == sorted(keys.values())


def test_remove_of_last_slot_and_of_only_item() -> None:
    heap: IndexedHeap[int, Key] = IndexedHeap()
    heap.push(1, (1, 1))
    heap.push(2, (2, 2))
    # id 2 sits in the last array slot: nothing has to move.
    assert heap._heap[-1][1] == 2
    assert heap.remove(2) == (2, 2)
    check_internals(heap)
    assert heap.remove(1) == (1, 1)
    assert len(heap) == 0
    assert heap._pos == {}


def test_remove_moves_last_entry_up_when_it_is_smaller() -> None:
    """Removing from one subtree may pull up a smaller last entry from another."""
    heap: IndexedHeap[int, Key] = IndexedHeap()
    # Array (by key): [0, 10, 1, 11, 12, 2, 3]; removing 11 (slot 3) moves key 3 into
    # slot 3 under parent 10, so it must sift up, not down.
    for item_id, key in enumerate([(0, 0), (10, 1), (1, 2), (11, 3), (12, 4), (2, 5), (3, 6)]):
        heap.push(item_id, key)
    assert [key for key, _ in heap._heap] == [
        (0, 0),
        (10, 1),
        (1, 2),
        (11, 3),
        (12, 4),
        (2, 5),
        (3, 6),
    ]
    assert heap.remove(3) == (11, 3)
    check_internals(heap)
    assert heap._heap[1][0] == (3, 6)
    assert [key for _, key in drain(heap)] == [(0, 0), (1, 2), (2, 5), (3, 6), (10, 1), (12, 4)]


def test_remove_of_missing_raises_key_error() -> None:
    heap: IndexedHeap[int, Key] = IndexedHeap()
    with pytest.raises(KeyError):
        heap.remove(1)
    heap.push(1, (1, 1))
    with pytest.raises(KeyError):
        heap.remove(2)
    heap.remove(1)
    with pytest.raises(KeyError):
        heap.remove(1)
    check_internals(heap)


def test_discard_reports_presence() -> None:
    heap: IndexedHeap[int, Key] = IndexedHeap()
    heap.push(1, (1, 1))
    assert heap.discard(2) is False
    assert heap.discard(1) is True
    assert heap.discard(1) is False
    assert len(heap) == 0


# ---------------------------------------------------------------------- update


def test_update_to_smaller_key_moves_item_up() -> None:
    heap: IndexedHeap[int, Key] = IndexedHeap()
    for item_id in range(15):
        heap.push(item_id, (item_id, item_id))
    heap.update(14, (-1, 100))
    check_internals(heap)
    assert heap.peek() == (14, (-1, 100))
    assert heap.key_of(14) == (-1, 100)
    assert [item_id for item_id, _ in drain(heap)] == [14, *range(14)]


def test_update_to_larger_key_moves_item_down() -> None:
    heap: IndexedHeap[int, Key] = IndexedHeap()
    for item_id in range(15):
        heap.push(item_id, (item_id, item_id))
    heap.update(0, (99, 100))
    check_internals(heap)
    assert heap.peek() == (1, (1, 1))
    assert [item_id for item_id, _ in drain(heap)] == [*range(1, 15), 0]


def test_update_in_the_middle_both_directions() -> None:
    heap: IndexedHeap[int, Key] = IndexedHeap()
    rng = random.Random(3)
    seq = itertools.count()
    keys: dict[int, Key] = {}
    for item_id in range(100):
        keys[item_id] = (rng.randrange(50), next(seq))
        heap.push(item_id, keys[item_id])
    for _ in range(300):
        item_id = rng.randrange(100)
        keys[item_id] = (rng.randrange(50), next(seq))
        heap.update(item_id, keys[item_id])
        check_internals(heap)
    expected = sorted(keys, key=keys.__getitem__)
    assert [item_id for item_id, _ in drain(heap)] == expected


def test_update_of_missing_raises_key_error() -> None:
    heap: IndexedHeap[int, Key] = IndexedHeap()
    heap.push(1, (1, 1))
    with pytest.raises(KeyError):
        heap.update(2, (0, 2))
    assert 2 not in heap
    assert len(heap) == 1
    check_internals(heap)


# --------------------------------------------------------------------- heapify


@pytest.mark.parametrize("size", [0, 1, 2, 3, 7, 8, 100, 1000])
def test_heapify_builds_a_valid_heap(size: int) -> None:
    rng = random.Random(size)
    keys = {item_id: (rng.randrange(size + 1), item_id) for item_id in range(size)}
    heap: IndexedHeap[int, Key] = IndexedHeap()
    heap.push(-1, (-5, -1))  # heapify replaces what was there
    heap.heapify(keys.items())
    check_internals(heap)
    assert len(heap) == size
    assert -1 not in heap
    assert all(heap.key_of(item_id) == key for item_id, key in keys.items())
    assert [key for _, key in drain(heap)] == sorted(keys.values())


def test_heapify_accepts_a_generator() -> None:
    heap: IndexedHeap[int, Key] = IndexedHeap()
    heap.heapify((item_id, (-item_id, item_id)) for item_id in range(10))
    check_internals(heap)
    assert heap.pop() == (9, (-9, 9))


def test_heapify_is_linear() -> None:
    """Counts key comparisons: bottom-up heapify needs < 2n, pushing one by one ~n log n.

    Comparisons, not time, so the test is stable on any machine.
    """
    compares = 0

    class CountingKey:
        __slots__ = ("value",)

        def __init__(self, value: int) -> None:
            self.value = value

        def __lt__(self, other: CountingKey) -> bool:
            nonlocal compares
            compares += 1
            return self.value < other.value

    size = 4096
    values = list(range(size, 0, -1))  # descending: the worst case for push-by-push
    heap: IndexedHeap[int, CountingKey] = IndexedHeap()
    heap.heapify((value, CountingKey(value)) for value in values)
    # Tuples (key, id) compare keys with == first and then <; only __lt__ is counted,
    # and == falls back to identity, so each tuple comparison costs at most one __lt__.
    assert compares < 2 * size
    assert heap.peek()[0] == 1
    heapify_compares = compares

    compares = 0
    pushed: IndexedHeap[int, CountingKey] = IndexedHeap()
    for value in values:
        pushed.push(value, CountingKey(value))
    assert compares > 5 * heapify_compares


def test_heapify_with_duplicate_ids_raises_value_error_and_leaves_heap_unchanged() -> None:
    heap: IndexedHeap[int, Key] = IndexedHeap()
    heap.push(1, (1, 1))
    heap.push(2, (2, 2))
    with pytest.raises(ValueError, match="duplicate"):
        heap.heapify([(5, (5, 3)), (6, (6, 4)), (5, (7, 5))])
    check_internals(heap)
    assert sorted(heap) == [1, 2]
    assert heap.key_of(1) == (1, 1)
    assert drain(heap) == [(1, (1, 1)), (2, (2, 2))]


def test_heap_stays_usable_after_heapify() -> None:
    heap: IndexedHeap[int, Key] = IndexedHeap()
    heap.heapify([(i, (i * 7 % 11, i)) for i in range(11)])
    heap.push(100, (-1, 100))
    heap.update(3, (-2, 101))
    heap.remove(5)
    check_internals(heap)
    assert heap.pop() == (3, (-2, 101))
    assert heap.pop() == (100, (-1, 100))


def test_clear_empties_heap_and_index() -> None:
    heap: IndexedHeap[int, Key] = IndexedHeap()
    heap.heapify([(i, (i, i)) for i in range(5)])
    heap.clear()
    assert len(heap) == 0
    assert 0 not in heap
    assert heap._pos == {}
    heap.push(0, (0, 0))
    assert heap.pop() == (0, (0, 0))


def test_matches_heapq_on_random_workload() -> None:
    """A quick deterministic cross-check against heapq (without removals)."""
    rng = random.Random(11)
    heap: IndexedHeap[int, Key] = IndexedHeap()
    reference: list[tuple[Key, int]] = []
    for step in range(2000):
        if reference and rng.random() < 0.4:
            key, item_id = heapq.heappop(reference)
            assert heap.pop() == (item_id, key)
        else:
            key = (rng.randrange(20), step)
            heap.push(step, key)
            heapq.heappush(reference, (key, step))
    check_internals(heap)


# ------------------------------------------------------------ stateful model

MAX_ID = 31
ids = st.integers(min_value=0, max_value=MAX_ID)
priorities = st.integers(min_value=-8, max_value=8)


class IndexedHeapMachine(RuleBasedStateMachine):
    """IndexedHeap against a dict id -> key whose minimum is found by sorting.

    Ids come from a small range so pushes collide and removals hit missing ids often.
    Keys are ``(priority, seq)`` with a fresh seq each time: unique, as the heap needs,
    with many equal priorities so the FIFO tie-break is exercised.
    """

    def __init__(self) -> None:
        super().__init__()
        self.heap: IndexedHeap[int, Key] = IndexedHeap()
        self.model: dict[int, Key] = {}
        self.seq = itertools.count()

    def new_key(self, priority: int) -> Key:
        return (priority, next(self.seq))

    def model_min(self) -> tuple[int, Key]:
        item_id, key = sorted(self.model.items(), key=lambda item: item[1])[0]
        return item_id, key

    @rule(item_id=ids, priority=priorities)
    def push(self, item_id: int, priority: int) -> None:
        key = self.new_key(priority)
        if item_id in self.model:
            with pytest.raises(KeyError):
                self.heap.push(item_id, key)
        else:
            self.heap.push(item_id, key)
            self.model[item_id] = key

    @rule()
    def pop(self) -> None:
        if not self.model:
            with pytest.raises(IndexError):
                self.heap.pop()
            return
        expected = self.model_min()
        assert self.heap.pop() == expected
        del self.model[expected[0]]

    @rule()
    def peek(self) -> None:
        if not self.model:
            with pytest.raises(IndexError):
                self.heap.peek()
            return
        assert self.heap.peek() == self.model_min()

    @rule(item_id=ids)
    def remove(self, item_id: int) -> None:
        if item_id not in self.model:
            with pytest.raises(KeyError):
                self.heap.remove(item_id)
            return
        assert self.heap.remove(item_id) == self.model.pop(item_id)

    @rule(item_id=ids)
    def discard(self, item_id: int) -> None:
        expected = self.model.pop(item_id, None) is not None
        assert self.heap.discard(item_id) is expected

    @rule(item_id=ids, priority=priorities)
    def update(self, item_id: int, priority: int) -> None:
        key = self.new_key(priority)
        if item_id not in self.model:
            with pytest.raises(KeyError):
                self.heap.update(item_id, key)
            return
        self.heap.update(item_id, key)
        self.model[item_id] = key

    @precondition(lambda self: bool(self.model))
    @rule(data=st.data(), priority=priorities)
    def update_present(self, data: st.DataObject, priority: int) -> None:
        """Update an id known to be queued (the plain rule misses half the time)."""
        item_id = data.draw(st.sampled_from(sorted(self.model)), label="item_id")
        key = self.new_key(priority)
        self.heap.update(item_id, key)
        self.model[item_id] = key

    @rule(
        items=st.lists(
            st.tuples(ids, priorities), max_size=MAX_ID + 1, unique_by=lambda item: item[0]
        )
    )
    def heapify(self, items: list[tuple[int, int]]) -> None:
        keyed = [(item_id, self.new_key(priority)) for item_id, priority in items]
        self.heap.heapify(iter(keyed))
        self.model = dict(keyed)

    @rule(items=st.lists(st.tuples(ids, priorities), min_size=1, max_size=8), data=st.data())
    def heapify_with_duplicate_id(self, items: list[tuple[int, int]], data: st.DataObject) -> None:
        duplicate = data.draw(st.sampled_from(items), label="duplicate")[0]
        items = [*items, (duplicate, 0)]
        data.draw(st.randoms(use_true_random=False), label="shuffle").shuffle(items)
        keyed = [(item_id, self.new_key(priority)) for item_id, priority in items]
        with pytest.raises(ValueError):
            self.heap.heapify(iter(keyed))
        # The model is unchanged: a failed heapify must leave the heap as it was.

    @rule()
    def clear(self) -> None:
        self.heap.clear()
        self.model.clear()

    @rule(item_id=ids)
    def key_of(self, item_id: int) -> None:
        if item_id in self.model:
            assert self.heap.key_of(item_id) == self.model[item_id]
        else:
            with pytest.raises(KeyError):
                self.heap.key_of(item_id)

    @invariant()
    def same_contents(self) -> None:
        assert len(self.heap) == len(self.model)
        assert bool(self.heap) == bool(self.model)
        assert sorted(self.heap) == sorted(self.model)
        for item_id in range(MAX_ID + 1):
            assert (item_id in self.heap) == (item_id in self.model)

    @invariant()
    def heap_property_and_index(self) -> None:
        check_internals(self.heap)
        for item_id, key in self.model.items():
            assert self.heap._heap[self.heap._pos[item_id]] == (key, item_id)


IndexedHeapMachine.TestCase.settings = settings(
    max_examples=200,
    stateful_step_count=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestIndexedHeapMachine = IndexedHeapMachine.TestCase


def test_lazy_discards_are_skipped_at_the_top_and_swept_out_in_bulk() -> None:
    heap: IndexedHeap[int, Key] = IndexedHeap()
    for item_id in range(200):
        heap.push(item_id, (item_id, item_id))
    for item_id in range(0, 60):
        assert heap.discard(item_id)
    assert heap._dead == 60  # below the sweep threshold: still marked in place
    check_internals(heap)
    assert heap.peek() == (60, (60, 60))  # the marked top entries are skipped
    assert len(heap) == 140 and 5 not in heap and 60 in heap
    for item_id in range(61, 150):
        heap.discard(item_id)
    check_internals(heap)
    assert heap._dead < len(heap._heap) / 2  # swept once the dead outnumbered the live
    assert [item for item, _ in drain(heap)] == [60, *range(150, 200)]
    assert not heap and len(heap) == 0
    with pytest.raises(IndexError):
        heap.peek()


@settings(max_examples=200)
@given(
    keys=st.lists(st.integers(0, 50), max_size=80),
    discarded=st.sets(st.integers(0, 79)),
    bound=st.integers(-1, 51),
)
def test_ids_with_key_at_most_finds_exactly_the_live_entries_up_to_the_bound(
    keys: list[int], discarded: set[int], bound: int
) -> None:
    heap: IndexedHeap[int, tuple[int, int]] = IndexedHeap()
    heap.heapify([(item_id, (key, item_id)) for item_id, key in enumerate(keys)])
    for item_id in discarded:
        heap.discard(item_id)
    expected = {
        item_id for item_id, key in enumerate(keys) if key <= bound and item_id not in discarded
    }

    found = heap.ids_with_key_at_most((bound, len(keys)))

    assert sorted(found) == sorted(expected)
    assert len(heap) == len(keys) - len(discarded & set(range(len(keys))))  # nothing removed


def test_pop_at_most_skips_lazily_discarded_heads() -> None:
    heap: IndexedHeap[int, Key] = IndexedHeap()
    for item_id in range(6):
        heap.push(item_id, (item_id, item_id))
    heap.discard(0)
    heap.discard(1)
    assert heap.pop_at_most((1, 99)) is None  # only dead entries are that early
    assert heap.pop_at_most((2, 2)) == (2, (2, 2))
    check_internals(heap)
    assert [heap.pop_at_most((9, 9)) for _ in range(4)] == [
        (3, (3, 3)),
        (4, (4, 4)),
        (5, (5, 5)),
        None,
    ]
    assert not heap and len(heap) == 0
