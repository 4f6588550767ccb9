"""The two time queues side by side: the indexed heap and the timing wheel.

    python benchmarks/bench_time_queue.py                 # 10k, 100k, 1M pending
    python benchmarks/bench_time_queue.py --sizes 10000000 --ops 20000   # 10M, if memory allows
    python benchmarks/bench_time_queue.py --smoke         # tiny: checks the script still runs

Each structure holds N pending keys ``(run_at, seq)`` spread uniformly over a day,
and is timed at three workloads, in microseconds per step, the median of
``--repeats`` rounds (the machine is shared; the median is the honest middle):

* **uniform**: ``push`` of a new key, ``discard`` of a random pending one, and the
  *hold* step (pop the head, push its next occurrence uniformly within the day): the
  classic priority-queue benchmark, the size stays N.
* **cancel-heavy**: each step schedules a timeout-like key (30-300 s ahead, 100 a
  simulated second); 90% of them are cancelled (two in three) or rescheduled (one in
  three) 2.56 s later, before they are due; whatever comes due is popped.
* **rate**: new keys arrive at 10,000 a second of simulated time, each due within
  10 s, and are popped as they come due: the step is one schedule plus its share of
  pops, and ``1e6 / step`` is the rate the structure sustains (goal: 10,000+/s).

``heapq`` with lazy deletion is measured in the same run as the baseline (it has no
index, so it is not a ``TimeQueue``: a cancel marks a tombstone). The figures to
compare are the same-run ratios, wheel / heap and each / heapq. ``--memory`` also
reports each structure's resident memory per pending key, in a fresh process each.

This is a benchmark, not a test: it exits 0 unless it crashes.
"""

from __future__ import annotations

import argparse
import collections
import gc
import heapq
import itertools
import json
import os
import platform
import random
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from taskgui.core.engine.time_queue import QUEUES  # noqa: E402

Key = tuple[float, int]
DAY = 86_400.0
BASE = 1_767_268_800.0  # 2026-01-01T12:00:00Z
RATE = 10_000.0  # new keys a second of simulated time, in the rate workload
STRUCTURES = ("heap", "wheel", "heapq")
WORKLOADS = ("push", "discard", "hold", "cancel-heavy", "rate")


class LazyHeapq:
    """``heapq`` with lazy deletion, the baseline: ``live`` maps id -> its key, and a
    heap entry whose key is not its id's live key is a tombstone that pop skips."""

    __slots__ = ("heap", "live")

    def __init__(self) -> None:
        self.heap: list[tuple[Key, int]] = []
        self.live: dict[int, Key] = {}

    def __len__(self) -> int:
        return len(self.live)

    def __bool__(self) -> bool:
        return bool(self.live)

    def heapify(self, items: Iterable[tuple[int, Key]]) -> None:
        self.live = dict(items)
        self.heap = [(key, item_id) for item_id, key in self.live.items()]
        heapq.heapify(self.heap)

    def push(self, item_id: int, key: Key) -> None:
        self.live[item_id] = key
        heapq.heappush(self.heap, (key, item_id))

    def discard(self, item_id: int) -> bool:
        found = self.live.pop(item_id, None) is not None
        if found and len(self.heap) > 2 * len(self.live) + 64:
            self.heap = [(key, i) for i, key in self.live.items()]
            heapq.heapify(self.heap)
        return found

    def update(self, item_id: int, key: Key) -> None:
        self.live[item_id] = key
        heapq.heappush(self.heap, (key, item_id))

    def _top(self) -> tuple[Key, int]:
        heap, live = self.heap, self.live
        while live.get(heap[0][1]) is not heap[0][0]:
            heapq.heappop(heap)
        return heap[0]

    def peek(self) -> tuple[int, Key]:
        key, item_id = self._top()
        return item_id, key

    def pop(self) -> tuple[int, Key]:
        self._top()
        key, item_id = heapq.heappop(self.heap)
        del self.live[item_id]
        return item_id, key


def new_structure(name: str) -> Any:
    return LazyHeapq() if name == "heapq" else QUEUES[name]()


def filled(name: str, size: int, rng: random.Random, seq: Iterable[int]) -> Any:
    queue = new_structure(name)
    queue.heapify(
        (item_id, (BASE + rng.random() * DAY, s))
        for item_id, s in zip(range(size), seq, strict=False)
    )
    return queue


# ------------------------------------------------------------------ workloads
# Each returns seconds for ``ops`` steps on a queue of about ``size`` keys, and
# leaves the queue at about ``size`` keys. Inputs are drawn before the clock starts.


def w_push(queue: Any, size: int, ops: int, rng: random.Random, seq: Any) -> float:
    items = [(size + i, (BASE + rng.random() * DAY, next(seq))) for i in range(ops)]
    push = queue.push
    began = time.perf_counter()
    for item_id, key in items:
        push(item_id, key)
    elapsed = time.perf_counter() - began
    for item_id, _ in items:
        queue.discard(item_id)
    return elapsed


def w_discard(queue: Any, size: int, ops: int, rng: random.Random, seq: Any) -> float:
    victims = rng.sample(range(size), ops)
    discard = queue.discard
    began = time.perf_counter()
    for item_id in victims:
        discard(item_id)
    elapsed = time.perf_counter() - began
    for item_id in victims:
        queue.push(item_id, (BASE + rng.random() * DAY, next(seq)))
    return elapsed


def w_hold(queue: Any, size: int, ops: int, rng: random.Random, seq: Any) -> float:
    offsets = [rng.random() * DAY for _ in range(ops)]
    seqs = [next(seq) for _ in range(ops)]
    pop, push = queue.pop, queue.push
    began = time.perf_counter()
    for offset, s in zip(offsets, seqs, strict=True):
        item_id, key = pop()
        push(item_id, (key[0] + offset, s))
    return time.perf_counter() - began


def w_cancel_heavy(queue: Any, size: int, ops: int, rng: random.Random, seq: Any) -> float:
    """Timeouts: scheduled 30-300 s ahead, 100 a second of simulated time; 90% are
    cancelled or rescheduled 256 steps (2.56 s) later, long before they are due. What
    comes due meanwhile (the 10%, the background) is popped."""
    lag = 256
    step = 0.01
    now = queue.peek()[1][0]
    fate = [rng.random() for _ in range(ops)]
    ahead = [30 + rng.random() * 270 for _ in range(2 * ops)]
    seqs = [next(seq) for _ in range(2 * ops)]
    recent: collections.deque[int] = collections.deque()
    push, discard, update, peek, pop = (
        queue.push,
        queue.discard,
        queue.update,
        queue.peek,
        queue.pop,
    )
    popped: list[tuple[int, Key]] = []
    keep = popped.append
    began = time.perf_counter()
    for index in range(ops):
        item_id = -next(seq)  # new ids are negative: the background is 0..N-1
        push(item_id, (now + ahead[index], seqs[index]))
        recent.append(item_id)
        if len(recent) > lag:
            victim = recent.popleft()
            chance = fate[index]
            if chance < 0.6:
                discard(victim)
            elif chance < 0.9:
                update(victim, (now + ahead[ops + index], seqs[ops + index]))
        now += step
        while queue and peek()[1][0] <= now:
            keep(pop())
    elapsed = time.perf_counter() - began
    for item_id in recent:
        queue.discard(item_id)
    refill(queue, popped, size, rng, seq)
    return elapsed


def w_rate(queue: Any, size: int, ops: int, rng: random.Random, seq: Any) -> float:
    """New keys at ``RATE`` a second of simulated time, each due within 10 s; popped
    as they come due (the pending background is due later than all of them)."""
    now = queue.peek()[1][0]
    step = 1 / RATE
    ahead = [rng.random() * 10 for _ in range(ops)]
    seqs = [next(seq) for _ in range(ops)]
    push, peek, pop = queue.push, queue.peek, queue.pop
    popped: list[tuple[int, Key]] = []
    keep = popped.append
    began = time.perf_counter()
    for index in range(ops):
        push(-next(seq), (now + ahead[index], seqs[index]))
        now += step
        while peek()[1][0] <= now:
            keep(pop())
    elapsed = time.perf_counter() - began
    refill(queue, popped, size, rng, seq)
    while len(queue) > size:  # the new keys still pending
        queue.pop()
    return elapsed


def refill(
    queue: Any, popped: list[tuple[int, Key]], size: int, rng: random.Random, seq: Any
) -> None:
    """Put back the background keys a workload popped, later in the day."""
    for item_id, key in popped:
        if item_id >= 0:
            queue.push(item_id, (key[0] + DAY, next(seq)))


WORKLOAD_FUNCS: dict[str, Callable[..., float]] = {
    "push": w_push,
    "discard": w_discard,
    "hold": w_hold,
    "cancel-heavy": w_cancel_heavy,
    "rate": w_rate,
}


def measure(
    names: Sequence[str], size: int, ops: int, repeats: int, seed: int
) -> dict[str, dict[str, float]]:
    """Median µs per step of each workload for each structure at one size.

    The structures take turns round by round (in a rotating order), so a noisy spell
    on the shared machine falls on all of them alike and the ratios stay fair.
    """
    queues: dict[str, Any] = {}
    out: dict[str, dict[str, float]] = {}
    for name in names:
        gc.collect()
        rng = random.Random(seed)
        began = time.perf_counter()
        queues[name] = filled(name, size, rng, itertools.count())
        out[name] = {"build": (time.perf_counter() - began) / size * 1e6}
    ops = max(1, min(ops, size // 10))
    rngs = {name: random.Random(seed + 1) for name in names}
    seqs = {name: itertools.count(size) for name in names}
    for workload in WORKLOADS:
        func = WORKLOAD_FUNCS[workload]
        rounds: dict[str, list[float]] = {name: [] for name in names}
        for turn in range(repeats):
            shift = turn % len(names)
            for name in [*names[shift:], *names[:shift]]:
                gc.collect()
                elapsed = func(queues[name], size, ops, rngs[name], seqs[name])
                rounds[name].append(elapsed / ops * 1e6)
        for name in names:
            out[name][workload] = statistics.median(rounds[name])
    for name, queue in queues.items():
        if abs(len(queue) - size) > size // 5 + 300:
            raise RuntimeError(f"{name} at {size}: {len(queue)} keys left, expected about {size}")
    return out


def rss_bytes() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def memory_child(name: str, size: int) -> None:
    """In a fresh process: resident bytes per key of one filled structure."""
    gc.collect()
    before = rss_bytes()
    # The keys (tuples) are counted too: every structure holds one per task.
    queue = filled(name, size, random.Random(1), itertools.count())
    queue.peek()
    gc.collect()
    print(json.dumps((rss_bytes() - before) / size))


def memory_per_key(name: str, size: int) -> float:
    output = subprocess.run(
        [sys.executable, __file__, "--memory-child", name, str(size)],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return float(json.loads(output.strip().splitlines()[-1]))


# ------------------------------------------------------------------ report


def label(size: int) -> str:
    for unit, div in (("M", 1_000_000), ("k", 1_000)):
        if size >= div and size % div == 0:
            return f"{size // div}{unit}"
    return str(size)


def report(
    results: dict[int, dict[str, dict[str, float]]], memory: dict[int, dict[str, float]]
) -> list[str]:
    sizes = sorted(results)
    names = [name for name in STRUCTURES if name in results[sizes[0]]]
    lines = [
        f"{'µs per step (median)':<22}"
        + "".join(f"{label(s) + ' ' + n:>13}" for s in sizes for n in names)
    ]
    for workload in ("build", *WORKLOADS):
        lines.append(
            f"{workload:<22}"
            + "".join(f"{results[s][n][workload]:>13.2f}" for s in sizes for n in names)
        )
    if memory:
        lines.append(
            f"{'bytes per key (RSS)':<22}"
            + "".join(
                f"{memory.get(s, {}).get(n, float('nan')):>13.0f}" for s in sizes for n in names
            )
        )
    pairs = [
        (f"{top}/{bottom}", top, bottom)
        for top, bottom in (("wheel", "heap"), ("heap", "heapq"), ("wheel", "heapq"))
        if top in names and bottom in names
    ]
    lines.append("")
    lines.append(
        f"{'ratio (same run)':<22}"
        + "".join(f"{label(s) + ' ' + title:>18}" for s in sizes for title, _, _ in pairs)
    )
    for workload in ("build", *WORKLOADS):
        cells = "".join(
            f"{results[s][top][workload] / results[s][bottom][workload]:>17.2f}x"
            for s in sizes
            for _, top, bottom in pairs
        )
        lines.append(f"{workload:<22}" + cells)
    lines.append("")
    for s in sizes:
        rates = ", ".join(f"{n} {1e6 / results[s][n]['rate']:,.0f}/s" for n in names)
        lines.append(f"sustained schedule rate at {label(s)} pending: {rates} (goal 10,000+/s)")
    return lines


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny sizes: checks the script runs")
    parser.add_argument("--sizes", type=int, nargs="+", help="pending keys (default 10k 100k 1M)")
    parser.add_argument("--ops", type=int, default=20_000, help="steps per round (at most N/10)")
    parser.add_argument("--repeats", type=int, default=5, help="rounds; the median is reported")
    parser.add_argument("--memory", action="store_true", help="also bytes per key, fresh processes")
    parser.add_argument(
        "--structures",
        nargs="+",
        choices=STRUCTURES,
        default=list(STRUCTURES),
        help="which to measure (all three by default; at 10M, heap and wheel fit memory)",
    )
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--memory-child", nargs=2, metavar=("NAME", "SIZE"), help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    if args.memory_child:
        memory_child(args.memory_child[0], int(args.memory_child[1]))
        return 0
    if args.smoke:
        sizes, ops, repeats = [2_000, 5_000], 100, 1
    else:
        sizes, ops, repeats = args.sizes or [10_000, 100_000, 1_000_000], args.ops, args.repeats
    began = time.perf_counter()
    results: dict[int, dict[str, dict[str, float]]] = {}
    memory: dict[int, dict[str, float]] = {}
    for size in sizes:
        results[size] = measure(args.structures, size, ops, repeats, args.seed)
        gc.collect()
        if args.memory or args.smoke:
            memory[size] = {name: memory_per_key(name, size) for name in args.structures}
    load = os.getloadavg()[0]
    print(
        f"bench_time_queue: Python {platform.python_version()} on {platform.machine()}; "
        f"{ops} steps a round, median of {repeats}; {time.perf_counter() - began:.0f} s; "
        f"load average {load:.2f} on {os.cpu_count()} CPUs"
    )
    print()
    for line in report(results, memory):
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
