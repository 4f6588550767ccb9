"""Both time queues against one model: a dict id -> key whose minimum is found by
sorting. Every implementation of ``TimeQueue`` runs the same state machine.

Times are drawn across every scale the wheel has (fractions of its tick, seconds,
days, centuries, before the epoch), with many ties so the seq decides, because the
head must be exact: the service arms its timer from it to the microsecond.
"""

from __future__ import annotations

import heapq
import itertools
import random

import pytest
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from taskgui.core.engine.time_queue import QUEUES, TimeKey, TimeQueue
from taskgui.core.engine.wheel import TICK, TimingWheel

MAX_ID = 31
ids = st.integers(min_value=0, max_value=MAX_ID)
# Offsets from a moving base, in seconds, at every level of the wheel.
offsets = st.one_of(
    st.sampled_from([0.0, TICK, -TICK, TICK / 2, 4.0, 256.0, 16384.0]),
    st.floats(min_value=-2.0, max_value=2.0, allow_nan=False),
    st.floats(min_value=-1e3, max_value=1e6, allow_nan=False),
    st.floats(min_value=-1e9, max_value=5e9, allow_nan=False),
    st.integers(min_value=-100, max_value=100).map(lambda us: us / 1_000_000),
)
BASE = 1_767_268_800.0  # 2026-01-01T12:00:00Z


def machine_for(name: str) -> type[RuleBasedStateMachine]:
    factory = QUEUES[name]

    class TimeQueueMachine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.queue: TimeQueue = factory()
            self.model: dict[int, TimeKey] = {}
            self.seq = itertools.count()
            self.base = BASE

        def new_key(self, offset: float) -> TimeKey:
            return (self.base + offset, next(self.seq))

        def model_min(self) -> tuple[int, TimeKey]:
            return min(self.model.items(), key=lambda item: item[1])

        @rule(item_id=ids, offset=offsets)
        def push(self, item_id: int, offset: float) -> None:
            key = self.new_key(offset)
            if item_id in self.model:
                with pytest.raises(KeyError):
                    self.queue.push(item_id, key)
            else:
                self.queue.push(item_id, key)
                self.model[item_id] = key

        @rule()
        def pop(self) -> None:
            if not self.model:
                with pytest.raises(IndexError):
                    self.queue.pop()
                return
            expected = self.model_min()
            assert self.queue.pop() == expected
            del self.model[expected[0]]
            self.base = expected[1][0]  # time moves on to what was due

        @rule(offset=offsets)
        def pop_at_most(self, offset: float) -> None:
            bound = (self.base + offset, 2**62)
            got = self.queue.pop_at_most(bound)
            if not self.model or self.model_min()[1] > bound:
                assert got is None
                return
            expected = self.model_min()
            assert got == expected
            del self.model[expected[0]]

        @rule()
        def peek(self) -> None:
            if not self.model:
                with pytest.raises(IndexError):
                    self.queue.peek()
                return
            assert self.queue.peek() == self.model_min()

        @rule(item_id=ids)
        def discard(self, item_id: int) -> None:
            expected = self.model.pop(item_id, None) is not None
            assert self.queue.discard(item_id) is expected

        @rule(item_id=ids, offset=offsets)
        def update(self, item_id: int, offset: float) -> None:
            key = self.new_key(offset)
            if item_id not in self.model:
                with pytest.raises(KeyError):
                    self.queue.update(item_id, key)
                return
            self.queue.update(item_id, key)
            self.model[item_id] = key

        @rule(
            items=st.lists(st.tuples(ids, offsets), max_size=MAX_ID + 1, unique_by=lambda i: i[0])
        )
        def heapify(self, items: list[tuple[int, float]]) -> None:
            keyed = [(item_id, self.new_key(offset)) for item_id, offset in items]
            self.queue.heapify(iter(keyed))
            self.model = dict(keyed)

        @rule(items=st.lists(st.tuples(ids, offsets), min_size=1, max_size=8))
        def heapify_with_duplicate_id(self, items: list[tuple[int, float]]) -> None:
            keyed = [(item_id, self.new_key(offset)) for item_id, offset in items]
            keyed.append((items[0][0], self.new_key(0.0)))
            with pytest.raises(ValueError):
                self.queue.heapify(iter(keyed))

        @rule()
        def clear(self) -> None:
            self.queue.clear()
            self.model.clear()

        @rule(item_id=ids)
        def key_of(self, item_id: int) -> None:
            if item_id in self.model:
                assert self.queue.key_of(item_id) == self.model[item_id]
            else:
                with pytest.raises(KeyError):
                    self.queue.key_of(item_id)

        @rule(offset=offsets)
        def ids_with_key_at_most(self, offset: float) -> None:
            bound = (self.base + offset, 2**62)
            expected = sorted(i for i, key in self.model.items() if key <= bound)
            assert sorted(self.queue.ids_with_key_at_most(bound)) == expected

        @invariant()
        def same_contents(self) -> None:
            assert len(self.queue) == len(self.model)
            assert bool(self.queue) == bool(self.model)
            assert sorted(self.queue) == sorted(self.model)
            for item_id in range(MAX_ID + 1):
                assert (item_id in self.queue) == (item_id in self.model)

    TimeQueueMachine.__name__ = f"{name.title()}Machine"
    return TimeQueueMachine


_SETTINGS = settings(
    max_examples=200,
    stateful_step_count=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
TestHeapAsTimeQueue = machine_for("heap").TestCase
TestHeapAsTimeQueue.settings = _SETTINGS
TestWheelAsTimeQueue = machine_for("wheel").TestCase
TestWheelAsTimeQueue.settings = _SETTINGS


@pytest.mark.parametrize("name", sorted(QUEUES))
def test_drains_a_large_random_schedule_in_exact_order(name: str) -> None:
    """Thousands of keys over seconds to years, a third cancelled or moved, new work
    arriving as time goes on: each pop is the minimum of what is queued (checked
    against ``heapq`` with lazy deletion)."""
    rng = random.Random(7)
    queue = QUEUES[name]()
    model: dict[int, TimeKey] = {}
    reference: list[tuple[TimeKey, int]] = []
    seq = itertools.count()

    def push(item_id: int, at: float) -> None:
        key = (at, next(seq))
        if item_id in model:
            queue.update(item_id, key)
        else:
            queue.push(item_id, key)
        model[item_id] = key
        heapq.heappush(reference, (key, item_id))

    for item_id in range(6000):
        spread = rng.choice([5.0, 86_400.0, 3e9])
        push(item_id, BASE + rng.uniform(0, spread))
    for item_id in rng.sample(range(6000), 2000):
        if rng.random() < 0.5:
            assert queue.discard(item_id)
            del model[item_id]
        else:
            push(item_id, BASE + rng.uniform(0, 600))
    next_id = 6000
    while queue:
        item_id, key = queue.pop()
        while model.get(reference[0][1]) != reference[0][0]:
            heapq.heappop(reference)  # cancelled or moved since
        assert (key, item_id) == heapq.heappop(reference)
        del model[item_id]
        if next_id < 7000:  # new work keeps arriving, some of it due at once
            push(next_id, key[0] + rng.choice([0.0, rng.uniform(0, 2), rng.uniform(0, 1e5)]))
            next_id += 1
    assert not model and len(queue) == 0


def test_a_far_bucket_never_hides_an_earlier_deadline() -> None:
    """The exactness the two-stage timer relies on: an item deep in a coarse bucket
    comes out before a later one pushed after it into the near heap."""
    wheel: TimingWheel[str] = TimingWheel()
    wheel.push("first", (BASE, 0))
    wheel.push("far", (BASE + 10_000.000001, 1))  # a level-2 bucket
    assert wheel.pop() == ("first", (BASE, 0))
    wheel.push("later", (BASE + 10_000.000002, 2))
    assert wheel.peek() == ("far", (BASE + 10_000.000001, 1))
    assert [wheel.pop()[0], wheel.pop()[0]] == ["far", "later"]


def test_a_cancel_before_the_bucket_is_due_touches_no_heap() -> None:
    wheel: TimingWheel[int] = TimingWheel()
    wheel.push(0, (BASE, 0))
    for item_id in range(1, 1001):
        wheel.push(item_id, (BASE + 30 + item_id / 1000, item_id))  # timeouts
    for item_id in range(1, 1001):
        assert wheel.discard(item_id)
    assert wheel.peek() == (0, (BASE, 0))
    assert len(wheel._near) == 1 and not wheel._where  # none of them reached a heap
    assert wheel.pop() == (0, (BASE, 0))
    assert not wheel
