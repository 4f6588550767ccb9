"""Time the scheduling core at 1k, 10k, 100k and 1M pending items.

    python benchmarks/bench_core.py            # 1k .. 1M (the 1M engine build may be skipped)
    python benchmarks/bench_core.py --quick    # 1k .. 100k, fewer operations
    python benchmarks/bench_core.py --smoke    # 100 and 1000, 50 operations (for the test)

Three structures are measured in the same run, so their ratios carry over to other
machines even when the absolute numbers do not:

* ``IndexedHeap``: push, remove by id, pop of the head.
* ``heapq`` with lazy cancellation, the usual alternative: cancel drops the id from a
  ``live`` dict (the tombstone) and pop skips entries that are no longer live; the heap
  is rebuilt when dead entries outnumber live ones, and that rebuild is timed where it
  happens (inside cancel), so its cost is amortized honestly. Its pop is measured on a
  heap without dead entries, which is the best case for it.
* ``Engine``: ``add`` of a task including building the validated ``TaskSpec`` and
  ``Command``, ``cancel(id)`` and dispatching the due head with ``due(now,
  free_workers=1)``, over the time queue ``--time-queue`` names (the default unless
  told).

The goals are ratios to ``heapq`` measured in the same run at 100k, because absolute
microseconds drift with the machine's load: add <= 25x heapq's push, cancel <= 30x
heapq's lazy cancel, due head <= 12x heapq's pop. (They restate the first absolute
goals, 10, 5 and 15 us, by heapq's figures on this machine when idle: about 0.4, 0.17
and 1.25 us.) The absolute figures are still printed beside them.

Every operation is timed in batches while the other N items are present; after each
batch the structure is put back to N items outside the timed region, so the size stays
about N throughout. Keys and run times are random, because pushing keys in ascending
order would make push look free. The figure reported is microseconds per operation,
the median of ``--repeats`` rounds (the machine is shared: the median is the honest
middle). Each engine row is timed interleaved with the heapq row its ratio is to (and
each IndexedHeap row with heapq's): a round of one, then a round of the other, the
order alternating, so the two sides of a round are tens of milliseconds apart and see
the same load. The ratio printed is the median of the per-round ratios, not a ratio of
medians taken minutes apart (that let a load change between them move the due-head
ratio from 5.9x to 19.2x on the same code). heapq's absolute figures are the median of
all its rounds beside every row. The garbage collector
stays enabled while timing, as it is in the app; it is run once before each batch
series so that garbage from building is not charged to the operation.

This is a benchmark, not a test: it always exits 0 unless it crashes. The goals are
checked against the 100k column and printed as MET or MISSED, with the ratios at
every size beside them.
"""

from __future__ import annotations

import argparse
import gc
import heapq
import itertools
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable, Hashable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Generic, TypeVar

# Run as a script from a checkout: make ``taskgui`` importable without installing it.
ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from taskgui.core.engine.engine import Engine  # noqa: E402
from taskgui.core.engine.heap import IndexedHeap  # noqa: E402
from taskgui.core.engine.time_queue import DEFAULT_TIME_QUEUE, NAMES  # noqa: E402
from taskgui.core.states import RunOutcome  # noqa: E402
from taskgui.core.task import Command, TaskSpec  # noqa: E402

IdT = TypeVar("IdT", bound=Hashable)
Key = tuple[float, int]

NOW = datetime(2026, 1, 1, tzinfo=UTC)
# Large enough that no task in the benchmark is ever treated as a misfire.
GRACE = timedelta(days=3650)
LINE = "true"
PRIORITIES = 10
GOAL_SIZE = 100_000
# The engine's time queue for this run (set from --time-queue in main).
TIME_QUEUE = [DEFAULT_TIME_QUEUE]

# Row names. Kept as constants because the goal and ratio tables refer to them.
IH_PUSH = "IndexedHeap.push"
IH_REMOVE = "IndexedHeap.remove(id)"
IH_POP = "IndexedHeap.pop (head)"
HQ_PUSH = "heapq+lazy push"
HQ_CANCEL = "heapq+lazy cancel(id)"
HQ_POP = "heapq+lazy pop (head)"
SPEC_BUILD = "TaskSpec+Command build only"
ENGINE_ADD_PREBUILT = "Engine.add (prebuilt spec)"
ENGINE_ADD = "Engine.add incl. TaskSpec build"
ENGINE_CANCEL = "Engine.cancel(id)"
ENGINE_DUE = "Engine.due(now,1) ready head"
ENGINE_DUE_TIME = "Engine.due(t,1) time->ready"

ROWS = [
    IH_PUSH,
    IH_REMOVE,
    IH_POP,
    HQ_PUSH,
    HQ_CANCEL,
    HQ_POP,
    SPEC_BUILD,
    ENGINE_ADD_PREBUILT,
    ENGINE_ADD,
    ENGINE_CANCEL,
    ENGINE_DUE,
    ENGINE_DUE_TIME,
]

# (row, heapq row, goal as a ratio to it at GOAL_SIZE, the first absolute goal in us,
# what the goal says)
GOALS = [
    (ENGINE_ADD, HQ_PUSH, 25.0, 10.0, "add (incl. the spec) / heapq push"),
    (ENGINE_CANCEL, HQ_CANCEL, 30.0, 5.0, "cancel / heapq lazy cancel"),
    (ENGINE_DUE, HQ_POP, 12.0, 15.0, "due head (ready) / heapq pop"),
]

# (label, numerator row, denominator row)
RATIOS = [
    ("IndexedHeap.push / heapq push", IH_PUSH, HQ_PUSH),
    ("IndexedHeap.remove / heapq cancel", IH_REMOVE, HQ_CANCEL),
    ("IndexedHeap.pop / heapq pop", IH_POP, HQ_POP),
    ("Engine.add incl. build / heapq push", ENGINE_ADD, HQ_PUSH),
    ("Engine.cancel / heapq cancel", ENGINE_CANCEL, HQ_CANCEL),
    ("Engine.due ready head / heapq pop", ENGINE_DUE, HQ_POP),
]


@dataclass(frozen=True)
class Mode:
    name: str
    sizes: tuple[int, ...]
    heap_ops: int
    engine_ops: int
    repeats: int
    check_goals: bool


MODES = {
    "full": Mode("full", (1_000, 10_000, 100_000, 1_000_000), 20_000, 5_000, 7, True),
    "quick": Mode("quick", (1_000, 10_000, 100_000), 5_000, 2_000, 7, True),
    "smoke": Mode("smoke", (100, 1_000), 50, 50, 1, False),
}


@dataclass
class Results:
    """Per-round microseconds per operation by row and size, and the per-round ratios
    of each interleaved pair; None where a case was skipped."""

    sizes: tuple[int, ...]
    rounds: dict[str, dict[int, list[float] | None]] = field(default_factory=dict)
    pair_ratios: dict[tuple[str, str], dict[int, list[float]]] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def add_rounds(self, row: str, size: int, values: list[float] | None) -> None:
        cells = self.rounds.setdefault(row, {})
        earlier = cells.get(size)
        cells[size] = None if values is None else [*(earlier or ()), *values]

    def add_pair(self, pair: PairRounds, size: int) -> None:
        self.add_rounds(pair.top, size, pair.top_us)
        self.add_rounds(pair.bottom, size, pair.bottom_us)
        self.pair_ratios.setdefault((pair.top, pair.bottom), {})[size] = pair.ratios

    def get(self, row: str, size: int) -> float | None:
        """The median of every round of ``row`` at ``size`` (heapq's rows are timed
        beside each engine row, so they have several pairs' rounds)."""
        values = self.rounds.get(row, {}).get(size)
        return statistics.median(values) if values else None

    def ratio_rounds(self, top: str, bottom: str, size: int) -> list[float] | None:
        return self.pair_ratios.get((top, bottom), {}).get(size)

    def ratio(self, top: str, bottom: str, size: int) -> float | None:
        """The median of the per-round ratios ``top / bottom`` of the pair, each round's
        two sides timed one right after the other, so a load change between rounds
        moves both. Falls back to the ratio of medians for a pair not interleaved."""
        values = self.ratio_rounds(top, bottom, size)
        if values:
            return statistics.median(values)
        num, den = self.get(top, size), self.get(bottom, size)
        return num / den if num is not None and den else None


# ------------------------------------------------------------------- harness


def chunk_size(size: int, ops: int) -> int:
    """Operations per timed batch: at most a tenth of the size, so it stays about N."""
    return max(1, min(ops, size // 10))


def per_op_us(total_ops: int, chunk: int, repeats: int, run_chunk: Callable[[int], float]) -> float:
    """Median-of-``repeats`` microseconds per operation.

    ``run_chunk(count)`` performs ``count`` operations, returns the seconds they took
    (timed by itself, around the operations only) and restores the structure after.
    """
    gc.collect()
    return statistics.median(round_us(total_ops, chunk, run_chunk) for _ in range(repeats))


def round_us(total_ops: int, chunk: int, run_chunk: Callable[[int], float]) -> float:
    """One round: ``total_ops`` operations in batches of ``chunk``, us per operation."""
    done = 0
    elapsed = 0.0
    while done < total_ops:
        count = min(chunk, total_ops - done)
        elapsed += run_chunk(count)
        done += count
    return elapsed / total_ops * 1e6


@dataclass(frozen=True)
class Timed:
    """A row's timed batches: ``ops`` operations a round, ``chunk`` at a time."""

    row: str
    ops: int
    chunk: int
    run_chunk: Callable[[int], float]

    def round(self) -> float:
        return round_us(self.ops, self.chunk, self.run_chunk)


@dataclass(frozen=True)
class PairRounds:
    top: str
    bottom: str
    top_us: list[float]
    bottom_us: list[float]
    ratios: list[float]


def interleaved(top: Timed, bottom: Timed, repeats: int) -> PairRounds:
    """``repeats`` rounds of ``top`` and ``bottom`` in turn, their order alternating, and
    the ratio of each round's two sides.

    The two sides of a round are tens of milliseconds apart, so they see the same load;
    a round's ratio is therefore the machine-independent figure, and its median over
    the rounds the one to read. (Timing all of one side, then all of the other, let a
    load change between them move the ratio 3x: 5.9x to 19.2x on the same code.)
    """
    gc.collect()
    tops: list[float] = []
    bottoms: list[float] = []
    for index in range(repeats):
        if index % 2:
            tops.append(top.round())
            bottoms.append(bottom.round())
        else:
            bottoms.append(bottom.round())
            tops.append(top.round())
    ratios = [t / b for t, b in zip(tops, bottoms, strict=True) if b > 0]
    return PairRounds(top.row, bottom.row, tops, bottoms, ratios)


def random_keys(count: int, span: float, seq: Iterator[int], rng: random.Random) -> list[Key]:
    """Unique keys ``(random time, seq)``, like the engine's ``(run_at, seq)``."""
    return [(rng.random() * span, next(seq)) for _ in range(count)]


def new_items(
    size: int, count: int, seq: Iterator[int], rng: random.Random
) -> list[tuple[int, Key]]:
    """``count`` items with fresh ids from ``size`` on and random keys."""
    return list(zip(range(size, size + count), random_keys(count, size, seq, rng), strict=True))


class LazyHeap(Generic[IdT]):
    """``heapq`` plus lazy cancellation: the usual way to cancel without an index.

    ``live`` maps each queued id to the key it was pushed with; an entry whose id is
    not live under that very key object is a tombstone that ``pop`` skips.
    """

    __slots__ = ("heap", "live")

    def __init__(self, items: Iterable[tuple[IdT, Key]] = ()) -> None:
        self.live: dict[IdT, Key] = dict(items)
        self.heap: list[tuple[Key, IdT]] = [(key, item_id) for item_id, key in self.live.items()]
        heapq.heapify(self.heap)

    def __len__(self) -> int:
        return len(self.live)

    def push(self, item_id: IdT, key: Key) -> None:
        if item_id in self.live:
            raise KeyError(item_id)
        self.live[item_id] = key
        heapq.heappush(self.heap, (key, item_id))

    def cancel(self, item_id: IdT) -> None:
        del self.live[item_id]
        if len(self.heap) > 2 * len(self.live) + 64:
            self.compact()

    def pop(self) -> tuple[IdT, Key]:
        heap = self.heap
        live = self.live
        while True:
            key, item_id = heapq.heappop(heap)
            if live.get(item_id) is key:
                del live[item_id]
                return item_id, key

    def compact(self) -> None:
        """Drop the tombstones: O(n), run when they outnumber the live entries."""
        self.heap = [(key, item_id) for item_id, key in self.live.items()]
        heapq.heapify(self.heap)


# --------------------------------------------------------------------- heaps


class IndexedHeapBench:
    """The indexed heap's timed batches; each restores the heap to its N items after."""

    def __init__(self, size: int, rng: random.Random) -> None:
        self.size, self.rng = size, rng
        self.seq = itertools.count()
        self.heap: IndexedHeap[int, Key] = IndexedHeap()
        self.heap.heapify(enumerate(random_keys(size, size, self.seq, rng)))

    def push_chunk(self, count: int) -> float:
        heap = self.heap
        items = new_items(self.size, count, self.seq, self.rng)
        push = heap.push
        start = time.perf_counter()
        for item_id, key in items:
            push(item_id, key)
        elapsed = time.perf_counter() - start
        for item_id, _ in items:
            heap.remove(item_id)
        return elapsed

    def remove_chunk(self, count: int) -> float:
        heap = self.heap
        victims = self.rng.sample(range(self.size), count)
        saved = [(item_id, heap.key_of(item_id)) for item_id in victims]
        remove = heap.remove
        start = time.perf_counter()
        for item_id in victims:
            remove(item_id)
        elapsed = time.perf_counter() - start
        for item_id, key in saved:
            heap.push(item_id, key)
        return elapsed

    def pop_chunk(self, count: int) -> float:
        heap = self.heap
        popped: list[tuple[int, Key]] = []
        keep = popped.append
        pop = heap.pop
        start = time.perf_counter()
        for _ in range(count):
            keep(pop())
        elapsed = time.perf_counter() - start
        for item_id, key in popped:
            heap.push(item_id, key)
        return elapsed

    def check(self) -> None:
        if len(self.heap) != self.size:
            raise RuntimeError(f"IndexedHeap benchmark left {len(self.heap)}, expected {self.size}")


class LazyHeapBench:
    """heapq's timed batches, each operation on a heap of its own (as built fresh).

    The cancel heap keeps its tombstones from batch to batch (re-pushed ids leave the
    old entry behind), so its amortized compaction is charged where it happens.
    """

    def __init__(self, size: int, rng: random.Random) -> None:
        self.size, self.rng = size, rng
        self.seq = itertools.count()
        self.for_push = self.fresh()
        self.for_cancel = self.fresh()
        self.for_pop = self.fresh()

    def fresh(self) -> LazyHeap[int]:
        return LazyHeap(enumerate(random_keys(self.size, self.size, self.seq, self.rng)))

    def push_chunk(self, count: int) -> float:
        heap = self.for_push
        items = new_items(self.size, count, self.seq, self.rng)
        push = heap.push
        start = time.perf_counter()
        for item_id, key in items:
            push(item_id, key)
        elapsed = time.perf_counter() - start
        for item_id, _ in items:
            heap.cancel(item_id)
        return elapsed

    def cancel_chunk(self, count: int) -> float:
        heap = self.for_cancel
        victims = self.rng.sample(range(self.size), count)
        saved = [(item_id, heap.live[item_id]) for item_id in victims]
        # Bound per batch: compact() may replace heap.heap, but not the method.
        cancel = heap.cancel
        start = time.perf_counter()
        for item_id in victims:
            cancel(item_id)
        elapsed = time.perf_counter() - start
        for item_id, key in saved:
            heap.push(item_id, key)  # the old entry stays behind as a tombstone
        return elapsed

    def pop_chunk(self, count: int) -> float:
        heap = self.for_pop
        popped: list[tuple[int, Key]] = []
        keep = popped.append
        pop = heap.pop
        start = time.perf_counter()
        for _ in range(count):
            keep(pop())
        elapsed = time.perf_counter() - start
        for item_id, key in popped:
            heap.push(item_id, key)
        return elapsed

    def check(self) -> None:
        for heap in (self.for_push, self.for_cancel, self.for_pop):
            if len(heap) != self.size:
                raise RuntimeError(f"heapq benchmark left {len(heap)}, expected {self.size}")


# -------------------------------------------------------------------- engine


@dataclass
class EngineFixture:
    engine: Engine
    specs: list[TaskSpec]  # specs[task_id - 1]
    by_time: list[tuple[datetime, int]]  # (first_run_at, task_id), earliest first
    build_seconds: float


def build_engine(size: int, rng: random.Random, budget: float) -> EngineFixture | None:
    """N one-off tasks with ids 1..N, due at distinct whole seconds spread over the past.

    Returns None when building takes longer than ``budget`` seconds.
    """
    base = NOW - timedelta(seconds=size + 1)
    offsets = list(range(size))
    rng.shuffle(offsets)
    command = Command(line="true")
    engine = Engine(rng=random.Random(0), time_queue=TIME_QUEUE[0])
    specs: list[TaskSpec] = []
    start = time.perf_counter()
    for task_id, offset in enumerate(offsets, start=1):
        spec = TaskSpec(
            id=task_id,
            name=f"task {task_id}",
            command=command,
            first_run_at=base + timedelta(seconds=offset),
            priority=rng.randrange(PRIORITIES),
            misfire_grace=GRACE,
        )
        engine.add(spec)
        specs.append(spec)
        if task_id % 8192 == 0 and time.perf_counter() - start > budget:
            return None
    build_seconds = time.perf_counter() - start
    by_time = sorted((spec.first_run_at, spec.id) for spec in specs)
    return EngineFixture(engine, specs, by_time, build_seconds)


def finish_and_readd(fixture: EngineFixture, now: datetime) -> int:
    """Finish every running run, then put its one-off task back as it was first added."""
    engine = fixture.engine
    runs = engine.running_runs
    for run_id, ticket in runs.items():
        engine.finished(run_id, RunOutcome.SUCCEEDED, now)
        engine.remove(ticket.task_id)
        engine.add(fixture.specs[ticket.task_id - 1])
    return len(runs)


class EngineBench:
    """The engine's timed batches; each restores the engine to its N tasks afterwards."""

    def __init__(self, fixture: EngineFixture, rng: random.Random) -> None:
        self.fixture = fixture
        self.engine = fixture.engine
        self.size = len(fixture.specs)
        self.base = NOW - timedelta(seconds=self.size + 1)
        self.rng = rng

    def new_inputs(self, count: int) -> list[tuple[int, str, datetime, int]]:
        """What a person would enter for ``count`` new tasks: id, name, time, priority."""
        size, rng = self.size, self.rng
        return [
            (
                task_id,
                f"task {task_id}",
                self.base + timedelta(seconds=rng.random() * size),
                rng.randrange(PRIORITIES),
            )
            for task_id in range(size + 1, size + 1 + count)
        ]

    def spec_chunk(self, count: int) -> float:
        inputs = self.new_inputs(count)
        built: list[TaskSpec] = []
        keep = built.append
        start = time.perf_counter()
        for task_id, name, at, priority in inputs:
            keep(
                TaskSpec(
                    id=task_id,
                    name=name,
                    command=Command(line=LINE),
                    first_run_at=at,
                    priority=priority,
                    misfire_grace=GRACE,
                )
            )
        return time.perf_counter() - start

    def add_prebuilt_chunk(self, count: int) -> float:
        command = Command(line=LINE)
        specs = [
            TaskSpec(
                id=task_id,
                name=name,
                command=command,
                first_run_at=at,
                priority=priority,
                misfire_grace=GRACE,
            )
            for task_id, name, at, priority in self.new_inputs(count)
        ]
        add = self.engine.add
        start = time.perf_counter()
        for spec in specs:
            add(spec)
        elapsed = time.perf_counter() - start
        for spec in specs:
            self.engine.remove(spec.id)
        return elapsed

    def add_chunk(self, count: int) -> float:
        inputs = self.new_inputs(count)
        add = self.engine.add
        start = time.perf_counter()
        for task_id, name, at, priority in inputs:
            add(
                TaskSpec(
                    id=task_id,
                    name=name,
                    command=Command(line=LINE),
                    first_run_at=at,
                    priority=priority,
                    misfire_grace=GRACE,
                )
            )
        elapsed = time.perf_counter() - start
        for task_id, *_ in inputs:
            self.engine.remove(task_id)
        return elapsed

    def cancel_chunk(self, count: int) -> float:
        victims = self.rng.sample(range(1, self.size + 1), count)
        cancel = self.engine.cancel
        start = time.perf_counter()
        for task_id in victims:
            cancel(task_id)
        elapsed = time.perf_counter() - start
        for task_id in victims:
            self.engine.remove(task_id)
            self.engine.add(self.fixture.specs[task_id - 1])
        return elapsed

    def due_time_chunk(self, count: int) -> float:
        """Each call's ``now`` is the next task's own run time, so exactly one task comes
        due: it moves from the time heap to the ready heap and is dispatched."""
        moments = [at for at, _ in self.fixture.by_time[:count]]
        due = self.engine.due
        start = time.perf_counter()
        for moment in moments:
            due(moment, 1)
        elapsed = time.perf_counter() - start
        dispatched = finish_and_readd(self.fixture, moments[-1])
        if dispatched != count or self.engine.ready_count():
            raise RuntimeError(f"due(t, 1) dispatched {dispatched} runs, expected {count}")
        return elapsed

    def due_ready_chunk(self, count: int) -> float:
        """All N tasks are due and in the ready heap; each call dispatches the head."""
        due = self.engine.due
        start = time.perf_counter()
        for _ in range(count):
            due(NOW, 1)
        elapsed = time.perf_counter() - start
        dispatched = finish_and_readd(self.fixture, NOW)
        self.engine.due(NOW, 0)  # the re-added tasks join the backlog again
        if dispatched != count or self.engine.ready_count() != self.size:
            raise RuntimeError(f"due(now, 1) dispatched {dispatched} runs, expected {count}")
        return elapsed


def heap_pairs(
    size: int, ops: int, rng: random.Random, hq: LazyHeapBench
) -> list[tuple[Timed, Timed]]:
    """The indexed heap beside heapq, operation by operation."""
    indexed = IndexedHeapBench(size, rng)
    chunk = chunk_size(size, ops)
    return [
        (Timed(IH_PUSH, ops, chunk, indexed.push_chunk), Timed(HQ_PUSH, ops, chunk, hq.push_chunk)),
        (
            Timed(IH_REMOVE, ops, chunk, indexed.remove_chunk),
            Timed(HQ_CANCEL, ops, chunk, hq.cancel_chunk),
        ),
        (Timed(IH_POP, ops, chunk, indexed.pop_chunk), Timed(HQ_POP, ops, chunk, hq.pop_chunk)),
    ]


def bench_heaps(
    size: int, ops: int, repeats: int, rng: random.Random, hq: LazyHeapBench
) -> list[PairRounds]:
    indexed_pairs = heap_pairs(size, ops, rng, hq)
    pairs = [interleaved(top, bottom, repeats) for top, bottom in indexed_pairs]
    hq.check()
    return pairs


def bench_engine(
    fixture: EngineFixture,
    *,
    ops: int,
    heap_ops: int,
    repeats: int,
    rng: random.Random,
    hq: LazyHeapBench,
) -> list[PairRounds]:
    """Each engine row interleaved with the heapq row its goal is a ratio to."""
    bench = EngineBench(fixture, rng)
    engine, size = bench.engine, bench.size
    chunk = chunk_size(size, ops)
    heap_chunk = chunk_size(size, heap_ops)
    push = Timed(HQ_PUSH, heap_ops, heap_chunk, hq.push_chunk)
    cancel = Timed(HQ_CANCEL, heap_ops, heap_chunk, hq.cancel_chunk)
    pop = Timed(HQ_POP, heap_ops, heap_chunk, hq.pop_chunk)
    plain = [
        (Timed(SPEC_BUILD, ops, chunk, bench.spec_chunk), push),
        (Timed(ENGINE_ADD_PREBUILT, ops, chunk, bench.add_prebuilt_chunk), push),
        (Timed(ENGINE_ADD, ops, chunk, bench.add_chunk), push),
        (Timed(ENGINE_CANCEL, ops, chunk, bench.cancel_chunk), cancel),
        (Timed(ENGINE_DUE_TIME, ops, chunk, bench.due_time_chunk), pop),
    ]
    pairs = [interleaved(top, bottom, repeats) for top, bottom in plain]
    # Everything is past due: one untimed call moves all N into the ready heap (a
    # backlog, as after waking from sleep); each timed call then dispatches its head.
    engine.due(NOW, 0)
    if engine.ready_count() != size:
        raise RuntimeError(f"{engine.ready_count()} tasks ready, expected {size}")
    pairs.append(interleaved(Timed(ENGINE_DUE, ops, chunk, bench.due_ready_chunk), pop, repeats))
    if len(engine) != size:
        raise RuntimeError(f"engine benchmark left {len(engine)} tasks, expected {size}")
    hq.check()
    return pairs


# ------------------------------------------------------------------- output


def label(size: int) -> str:
    if size >= 1_000_000 and size % 1_000_000 == 0:
        return f"{size // 1_000_000}M"
    if size >= 1_000 and size % 1_000 == 0:
        return f"{size // 1_000}k"
    return str(size)


def cell(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"


def format_table(results: Results) -> list[str]:
    sizes = results.sizes
    first, last = sizes[0], sizes[-1]
    name_width = max(len(row) for row in ROWS) + 2
    growth = f"growth {label(first)}->{label(last)}"
    header = f"{'operation (us/op)':<{name_width}}" + "".join(
        f"{label(size):>10}" for size in sizes
    )
    lines = [header + f"  {growth:>16}", "-" * (len(header) + 18)]
    for row in ROWS:
        values = [results.get(row, size) for size in sizes]
        start, end = values[0], values[-1]
        ratio = f"x{end / start:.1f}" if start and end is not None else "n/a"
        lines.append(
            f"{row:<{name_width}}" + "".join(f"{cell(v):>10}" for v in values) + f"  {ratio:>16}"
        )
    lines.append("")
    ratio_width = max(len(name) for name, _, _ in RATIOS) + 2
    lines.append(
        f"{'ratio (same run)':<{ratio_width}}" + "".join(f"{label(size):>10}" for size in sizes)
    )
    for name, top, bottom in RATIOS:
        cells = []
        for size in sizes:
            value = results.ratio(top, bottom, size)
            cells.append("n/a" if value is None else f"{value:.1f}x")
        lines.append(f"{name:<{ratio_width}}" + "".join(f"{c:>10}" for c in cells))
    return lines


def format_goals(results: Results) -> list[str]:
    """The goals as ratios to heapq at every size, the verdict at ``GOAL_SIZE``."""
    sizes = results.sizes
    width = max(len(what) for *_, what in GOALS) + 2
    lines = [
        f"goals at {label(GOAL_SIZE)} pending tasks, as ratios to heapq in this run "
        "(each size shown; the verdict is the 100k one):",
        f"  {'':<{width}}{'goal':>8}"
        + "".join(f"{label(size):>9}" for size in sizes)
        + "  verdict",
    ]
    met = judged = 0
    for row, baseline, ratio, absolute, what in GOALS:
        cells = []
        for size in sizes:
            value = results.ratio(row, baseline, size)
            cells.append("n/a" if value is None else f"{value:.1f}x")
        measured, peer = results.get(row, GOAL_SIZE), results.get(baseline, GOAL_SIZE)
        paired = results.ratio(row, baseline, GOAL_SIZE)
        spread = results.ratio_rounds(row, baseline, GOAL_SIZE) or []
        if measured is None or not peer or paired is None:
            verdict = "n/a (not measured at 100k)"
        else:
            judged += 1
            passed = paired <= ratio
            met += passed
            verdict = (
                f"{'MET ' if passed else 'MISSED'} (rounds {min(spread):.1f}-{max(spread):.1f}x; "
                f"{measured:.2f} us against heapq's {peer:.2f}; the first absolute goal "
                f"was {absolute:g} us)"
            )
        lines.append(
            f"  {what:<{width}}{f'<= {ratio:g}x':>8}"
            + "".join(f"{c:>9}" for c in cells)
            + f"  {verdict}"
        )
    lines.append(f"  {met} of {judged} goals met at {label(GOAL_SIZE)}")
    return lines


# --------------------------------------------------------------------- main


def load_average() -> str:
    """The 1-minute load average, to judge how noisy the numbers are ("?" if unknown)."""
    try:
        return f"{os.getloadavg()[0]:.2f} on {os.cpu_count()} CPUs"
    except (AttributeError, OSError):
        return "?"


def run(mode: Mode, *, build_budget: float, seed: int, log: Callable[[str], None]) -> Results:
    rng = random.Random(seed)
    results = Results(mode.sizes)
    per_task_build: float | None = None
    for size in mode.sizes:
        log(f"size {label(size)}: heaps")
        hq = LazyHeapBench(size, rng)
        for pair in bench_heaps(size, mode.heap_ops, mode.repeats, rng, hq):
            results.add_pair(pair, size)
        gc.collect()

        engine_rows = [SPEC_BUILD, ENGINE_ADD_PREBUILT, ENGINE_ADD, ENGINE_CANCEL]
        engine_rows += [ENGINE_DUE, ENGINE_DUE_TIME]
        estimate = per_task_build * size if per_task_build is not None else 0.0
        if estimate > 1.5 * build_budget:
            results.notes.append(
                f"engine at {label(size)} skipped: building it would take about "
                f"{estimate:.0f} s (budget {build_budget:.0f} s; raise --build-budget)"
            )
            for row in engine_rows:
                results.add_rounds(row, size, None)
            continue
        log(f"size {label(size)}: building the engine")
        fixture = build_engine(size, rng, build_budget)
        if fixture is None:
            results.notes.append(
                f"engine at {label(size)} skipped: building it took over {build_budget:.0f} s "
                "(raise --build-budget)"
            )
            for row in engine_rows:
                results.add_rounds(row, size, None)
            gc.collect()
            continue
        per_task_build = fixture.build_seconds / size
        log(f"size {label(size)}: built in {fixture.build_seconds:.1f} s; timing the engine")
        pairs = bench_engine(
            fixture,
            ops=mode.engine_ops,
            heap_ops=mode.heap_ops,
            repeats=mode.repeats,
            rng=rng,
            hq=hq,
        )
        for pair in pairs:
            results.add_pair(pair, size)
        del fixture, hq
        gc.collect()
    return results


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--quick", action="store_true", help="1k..100k, fewer operations")
    group.add_argument("--smoke", action="store_true", help="100 and 1000, 50 operations")
    parser.add_argument(
        "--build-budget",
        type=float,
        default=60.0,
        metavar="SECONDS",
        help="skip an engine size whose build takes longer than this (default 60)",
    )
    parser.add_argument(
        "--time-queue",
        choices=NAMES,
        help=f"the engine's time queue (default: {DEFAULT_TIME_QUEUE})",
    )
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--repeats", type=int, help="rounds per measurement (the median is kept)")
    parser.add_argument("--ops", type=int, help="operations per measurement (heaps and engine)")
    parser.add_argument("--verbose", action="store_true", help="print progress to stderr")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    TIME_QUEUE[0] = args.time_queue or DEFAULT_TIME_QUEUE
    mode = MODES["smoke" if args.smoke else "quick" if args.quick else "full"]
    if args.repeats is not None or args.ops is not None:
        mode = Mode(
            mode.name,
            mode.sizes,
            args.ops or mode.heap_ops,
            args.ops or mode.engine_ops,
            args.repeats or mode.repeats,
            mode.check_goals,
        )

    def log(message: str) -> None:
        if args.verbose:
            print(message, file=sys.stderr, flush=True)

    started = time.perf_counter()
    results = run(mode, build_budget=args.build_budget, seed=args.seed, log=log)
    elapsed = time.perf_counter() - started

    print(
        f"bench_core ({mode.name}): Python {platform.python_version()} "
        f"({platform.python_implementation()}) on {platform.machine()} {platform.system()}; "
        f"{mode.heap_ops} heap ops / {mode.engine_ops} engine ops per cell, "
        f"median of {mode.repeats}; engine time queue {TIME_QUEUE[0]}; {elapsed:.0f} s; "
        f"load average {load_average()}"
    )
    print()
    for line in format_table(results):
        print(line)
    if mode.check_goals:
        print()
        for line in format_goals(results):
            print(line)
    for note in results.notes:
        print(f"note: {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
