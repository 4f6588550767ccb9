"""The engine beside an older checkout's, interleaved cell by cell: is it slower?

    python benchmarks/compare_core.py --base /path/to/old-checkout [--rounds 7]
    python benchmarks/compare_core.py --base . --smoke   # tiny: checks it still runs

The machine is shared, and its load moves absolute figures by 2-3x from one minute
to the next, so neither a figure from last week nor one from a run a minute ago can be
held against today's. This starts one worker process per checkout, each importing its
own ``taskgui`` and its own ``benchmarks/bench_core.py`` (whose engine fixtures and
timed batches it reuses), builds the same engines in both, and then asks them in turn
for one cell at a time (an operation at a size, ``--ops`` operations), the order
alternating: the two measurements of a pair are tens of milliseconds apart, so they
see the same load. Printed for each cell: the median of each side over ``--rounds``
and the median of the per-round ratios (this ÷ base), which is the figure to read,
with the load average. This is a benchmark, not a test: it exits 0 unless a worker
crashes.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent.parent
SIZES = (1_000, 10_000, 100_000)
# bench_core's timed batches, by the name of its EngineBench method; "due_ready" runs
# on a second engine whose tasks are all due (bench_core's backlog).
OPS = ("add_chunk", "cancel_chunk", "due_ready_chunk", "due_time_chunk")
LABELS = {
    "add_chunk": "engine add incl. the spec",
    "cancel_chunk": "engine cancel",
    "due_ready_chunk": "engine due head (ready)",
    "due_time_chunk": "engine due head (time -> ready)",
}

# The worker: run as ``python -c WORKER TREE`` so it imports TREE's code only.
WORKER = r"""
import json, random, sys
tree = sys.argv[1]
sys.path[:0] = [tree, tree + "/benchmarks"]
import bench_core as bc
fixtures = {}
for size in json.loads(sys.argv[2]):
    rng = random.Random(size)
    plain = bc.build_engine(size, rng, 1e9)
    backlog = bc.build_engine(size, rng, 1e9)
    backlog.engine.due(bc.NOW, 0)
    fixtures[size] = (bc.EngineBench(plain, rng), bc.EngineBench(backlog, rng))
print("ready", flush=True)
for line in sys.stdin:
    op, size, ops = json.loads(line)
    plain, backlog = fixtures[size]
    bench = backlog if op == "due_ready_chunk" else plain
    us = bc.per_op_us(ops, bc.chunk_size(size, ops), 1, getattr(bench, op))
    print(json.dumps(us), flush=True)
"""


class Worker:
    def __init__(self, tree: Path, sizes: tuple[int, ...]) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", WORKER, str(tree), json.dumps(sizes)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.process.stdout is not None
        if self.process.stdout.readline().strip() != "ready":
            raise RuntimeError(f"the worker for {tree} did not start")

    def cell(self, op: str, size: int, ops: int) -> float:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps([op, size, ops]) + "\n")
        self.process.stdin.flush()
        value: float = json.loads(self.process.stdout.readline())
        return value

    def close(self) -> None:
        assert self.process.stdin is not None
        self.process.stdin.close()
        self.process.wait()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--base", type=Path, required=True, help="the older checkout")
    parser.add_argument("--this", type=Path, default=HERE, help="the newer (this one)")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--ops", type=int, default=2_000, help="operations per cell")
    parser.add_argument("--sizes", type=int, nargs="+", default=list(SIZES))
    parser.add_argument("--smoke", action="store_true", help="tiny: checks the script runs")
    options = parser.parse_args(argv)
    if options.smoke:
        options.rounds, options.ops, options.sizes = 1, 20, [100, 1_000]
    sizes = tuple(options.sizes)
    workers = {
        "base": Worker(options.base.resolve(), sizes),
        "this": Worker(options.this.resolve(), sizes),
    }
    cells = [(op, size) for op in OPS for size in sizes]
    times: dict[tuple[str, int], dict[str, list[float]]] = {
        cell: {"base": [], "this": []} for cell in cells
    }
    loads: list[float] = []
    order = ["base", "this"]
    shuffle = random.Random(0)
    for _ in range(options.rounds):
        loads.append(os.getloadavg()[0])
        shuffle.shuffle(cells)
        for op, size in cells:
            order.reverse()  # who goes first alternates
            for side in order:
                times[op, size][side].append(workers[side].cell(op, size, options.ops))
    for worker in workers.values():
        worker.close()
    print(
        f"compare_core: {options.this} against {options.base}, {options.rounds} rounds of "
        f"{options.ops} operations a cell, interleaved; load average "
        f"{min(loads):.1f}-{max(loads):.1f} on {os.cpu_count()} CPUs"
    )
    print("µs per operation, median: base / this (this ÷ base, the median of the pairs)")
    width = max(len(label) for label in LABELS.values()) + 2
    print(f"{'':<{width}}" + "".join(f"{size:>26,}" for size in sizes))
    for op in OPS:
        row = []
        for size in sizes:
            pair: dict[str, Any] = times[op, size]
            ratio = statistics.median(
                t / b for b, t in zip(pair["base"], pair["this"], strict=True)
            )
            row.append(
                f"{statistics.median(pair['base']):.2f} / "
                f"{statistics.median(pair['this']):.2f} ({ratio:.2f}x)"
            )
        print(f"{LABELS[op]:<{width}}" + "".join(f"{cell:>26}" for cell in row))
    return 0


if __name__ == "__main__":
    sys.exit(main())
