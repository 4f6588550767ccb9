"""Time the task table at up to 100,000 tasks: load, sorting, ticks, bursts of updates.

    python benchmarks/bench_model.py            # 100k tasks, 10k-task bursts
    python benchmarks/bench_model.py --smoke    # 1k tasks, 500-task bursts (for the test)

Everything runs with a real ``QTableView`` shown on the offscreen platform (set
``QT_QPA_PLATFORM`` to use another), a ``TaskFilterProxy`` sorted on "Next run" and
the system clock, as in the app. Measured:

* **load**: ``reset_tasks`` with the model alone, behind the unsorted proxy and view,
  and behind the sorted one (the proxy reads one key per row and sorts them once).
  The model alone is the baseline the proxy and view add to.
* **sort**: clicks on column headers of a loaded table sorted by "Next run", each a
  re-sort plus the repaint: a new column (keys read for the first time), the same
  column again (the order flipped), a column sorted before (keys cached). Then the
  filters: a state group on and off, a search typed and cleared.
* **tick**: one ``CountdownTicker.tick()`` plus the repaint it causes, at the small
  and the large size. The goal is that it does not grow: the ratio is printed.
* **burst**: 10,000 ``on_task_added`` (then 10,000 ``on_task_changed``, then 10,000
  changes of the next run time, each of which moves its row) in one go, as the service
  publishes a bulk import or a wake, on top of the large table. A 1 ms timer
  records the gaps between its timeouts; the longest gap is the longest the window
  was frozen (goal <= 50 ms). The baseline is the same burst handled synchronously
  (``flush_pending()`` straight after it), measured in the same run.

This is a benchmark, not a test: it exits 0 unless it crashes.
"""

from __future__ import annotations

import argparse
import gc
import os
import platform
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

# Run as a script from a checkout: make ``taskgui`` importable without installing it.
ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from PySide6 import __version__ as pyside_version  # noqa: E402
from PySide6.QtCore import QElapsedTimer, QEventLoop, Qt, QTimer  # noqa: E402
from PySide6.QtWidgets import QApplication, QHeaderView, QTableView  # noqa: E402

from taskgui.core.clock import SystemClock  # noqa: E402
from taskgui.core.states import TaskState, WaitReason  # noqa: E402
from taskgui.core.status import TaskSnapshot, TaskStatus  # noqa: E402
from taskgui.core.task import Command, TaskSpec  # noqa: E402
from taskgui.ui.table.countdown import CountdownTicker  # noqa: E402
from taskgui.ui.table.task_filter import StateFilter, TaskFilterProxy  # noqa: E402
from taskgui.ui.table.task_model import Column, TaskTableModel  # noqa: E402

STALL_GOAL_MS = 50.0
TICK_GROWTH_GOAL = 2.0
SORTED_LOAD_GOAL_S = 1.0
CLICK_GOAL_S = 0.3
VIEW_SIZE = (1000, 700)


@dataclass(frozen=True, slots=True)
class Sizes:
    load: tuple[int, ...]
    tick_small: int
    tick_large: int
    ticks: int
    burst_base: int
    burst: int


FULL = Sizes(
    load=(1_000, 10_000, 100_000),
    tick_small=100,
    tick_large=100_000,
    ticks=200,
    burst_base=100_000,
    burst=10_000,
)
SMOKE = Sizes(
    load=(100, 1_000), tick_small=100, tick_large=1_000, ticks=20, burst_base=1_000, burst=500
)

STATES = (TaskState.PENDING, TaskState.PENDING, TaskState.RUNNING, TaskState.RETRYING)


def make_snapshots(count: int, first_id: int, rng: random.Random) -> list[TaskSnapshot]:
    """Tasks due over the next day, a few running or retrying, names in random order."""
    now = datetime.now(UTC)
    command = Command(line="true")
    snapshots = []
    for offset in range(count):
        spec = TaskSpec(
            id=first_id + offset,
            name=f"task {rng.randrange(10**9):09d}",
            command=command,
            first_run_at=now,
            priority=rng.randrange(-10, 100),
        )
        state = rng.choice(STATES)
        running = state is TaskState.RUNNING
        status = TaskStatus(
            state=state,
            attempt=1 if state is TaskState.RETRYING else 0,
            slot_attempt=2 if state is TaskState.RETRYING else 1,
            next_run_at=now + timedelta(seconds=rng.uniform(1, 86_400)),
            running=1 if running else 0,
            running_since=now if running else None,
        )
        snapshots.append(TaskSnapshot(spec, status))
    return snapshots


class Table:
    """A model, a proxy sorted on "Next run" (or not) and a shown view: the app's table."""

    def __init__(self, *, sorted_view: bool = True, with_view: bool = True) -> None:
        self.model = TaskTableModel(SystemClock())
        self.proxy: TaskFilterProxy | None = None
        self.view: QTableView | None = None
        if not with_view:
            return
        self.proxy = TaskFilterProxy()
        self.proxy.setSourceModel(self.model)
        self.view = QTableView()
        self.view.setModel(self.proxy)
        self.view.resize(*VIEW_SIZE)
        if sorted_view:
            self.view.setSortingEnabled(True)
            self.view.sortByColumn(Column.NEXT_RUN, Qt.SortOrder.AscendingOrder)
        self.view.show()
        settle()

    def close(self) -> None:
        if self.view is not None:
            self.view.close()
            self.view.deleteLater()
        settle()


def settle() -> None:
    QApplication.processEvents()
    QApplication.processEvents()


def timed(action: Callable[[], object]) -> float:
    gc.collect()
    started = time.perf_counter()
    action()
    return time.perf_counter() - started


# ----------------------------------------------------------------------- load


def bench_load(sizes: Sizes, rng: random.Random) -> tuple[list[str], float]:
    """Loads at each size; returns the sorted load of the largest."""
    lines = [f"{'load (reset_tasks), seconds':<38}" + "".join(f"{n:>12,}" for n in sizes.load)]
    largest: dict[str, float] = {}
    for label, kwargs in (
        ("model alone", {"with_view": False}),
        ("+ proxy and view, unsorted", {"sorted_view": False}),
        ("+ proxy and view, sorted by next run", {"sorted_view": True}),
    ):
        cells = []
        for count in sizes.load:
            snapshots = make_snapshots(count, 1, rng)
            table = Table(**kwargs)

            def load(table: Table = table, snapshots: list[TaskSnapshot] = snapshots) -> None:
                table.model.reset_tasks(snapshots, {})
                if table.proxy is not None:
                    table.proxy.rowCount()
                settle()

            seconds = timed(load)
            largest[label] = seconds
            cells.append(f"{seconds:>12.3f}")
            table.close()
        lines.append(f"{label:<38}" + "".join(cells))
    alone = largest["model alone"]
    sorted_load = largest["+ proxy and view, sorted by next run"]
    lines.append(
        f"ratio at {sizes.load[-1]:,}: sorted load / model alone = "
        f"{sorted_load / alone if alone else float('inf'):.1f}"
    )
    return lines, sorted_load


# ----------------------------------------------------------------------- sort

CLICKS = (
    ("click Name (new column)", Column.NAME, Qt.SortOrder.AscendingOrder),
    ("click Name again (flip)", Column.NAME, Qt.SortOrder.DescendingOrder),
    ("click Priority (new column)", Column.PRIORITY, Qt.SortOrder.AscendingOrder),
    ("click State (new column)", Column.STATE, Qt.SortOrder.AscendingOrder),
    ("click Next run (keys cached)", Column.NEXT_RUN, Qt.SortOrder.AscendingOrder),
)


def bench_sort(sizes: Sizes, rng: random.Random) -> tuple[list[str], float]:
    """Header clicks and filter changes on loaded tables; returns the slowest click."""
    labels = [label for label, _, _ in CLICKS] + [
        "filter Running, then All",
        "search typed, then cleared",
    ]
    cells: dict[str, list[str]] = {label: [] for label in labels}
    slowest = 0.0
    for count in sizes.load:
        table = Table()
        table.model.reset_tasks(make_snapshots(count, 1, rng), {})
        settle()
        assert table.view is not None and table.proxy is not None
        header = table.view.horizontalHeader()
        for label, column, order in CLICKS:

            def click(
                column: int = column,
                order: Qt.SortOrder = order,
                header: QHeaderView = header,
            ) -> None:
                header.setSortIndicator(column, order)  # what a click on the header does
                settle()

            seconds = timed(click)
            slowest = max(slowest, seconds) if count == sizes.load[-1] else slowest
            cells[label].append(f"{seconds:>12.3f}")
        proxy = table.proxy

        def filter_on_and_off(proxy: TaskFilterProxy = proxy) -> None:
            proxy.set_state_filter(StateFilter.RUNNING)
            settle()
            proxy.set_state_filter(StateFilter.ALL)
            settle()

        def search(proxy: TaskFilterProxy = proxy) -> None:
            for text in ("t", "ta", "task 1", "task 12", ""):
                proxy.set_search_text(text)
                settle()

        cells["filter Running, then All"].append(f"{timed(filter_on_and_off):>12.3f}")
        cells["search typed, then cleared"].append(f"{timed(search):>12.3f}")
        table.close()
    lines = [f"{'sort and filter, seconds':<38}" + "".join(f"{n:>12,}" for n in sizes.load)]
    lines.extend(f"{label:<38}" + "".join(cells[label]) for label in labels)
    return lines, slowest


# ----------------------------------------------------------------------- tick


def bench_tick(sizes: Sizes, rng: random.Random) -> tuple[list[str], float]:
    results = {}
    for count in (sizes.tick_small, sizes.tick_large):
        table = Table()
        table.model.reset_tasks(make_snapshots(count, 1, rng), {})
        settle()
        assert table.view is not None and table.proxy is not None
        ticker = CountdownTicker(table.view, table.proxy, table.model)
        rows = sum(last - first + 1 for first, last in ticker.visible_source_ranges())
        tick_only, with_paint = [], []

        def tick_and_paint(ticker: CountdownTicker = ticker) -> None:
            ticker.tick()
            settle()

        for _ in range(sizes.ticks):
            tick_only.append(timed(ticker.tick))
            with_paint.append(timed(tick_and_paint))
        results[count] = (rows, statistics.median(tick_only), statistics.median(with_paint))
        table.close()
    small, large = results[sizes.tick_small], results[sizes.tick_large]
    ratio = large[2] / small[2] if small[2] else float("inf")
    lines = [
        f"{'countdown tick, median ms':<38}{sizes.tick_small:>12,}{sizes.tick_large:>12,}"
        f"{'ratio':>10}",
        f"{'visible rows refreshed':<38}{small[0]:>12}{large[0]:>12}",
        f"{'tick()':<38}{small[1] * 1e3:>12.3f}{large[1] * 1e3:>12.3f}"
        f"{large[1] / small[1] if small[1] else float('inf'):>10.2f}",
        f"{'tick() + repaint':<38}{small[2] * 1e3:>12.3f}{large[2] * 1e3:>12.3f}{ratio:>10.2f}",
    ]
    return lines, ratio


# ---------------------------------------------------------------------- burst


@dataclass(frozen=True, slots=True)
class Stall:
    longest_ms: float
    p99_ms: float
    drained_ms: float


class _BurstProbe:
    """A 1 ms timer that records the gaps between its timeouts around one burst."""

    def __init__(self, model: TaskTableModel, burst: Callable[[], None]) -> None:
        self.model = model
        self.burst = burst
        self.gaps: list[float] = []
        self.elapsed = QElapsedTimer()
        self.last = 0.0
        self.burst_at: float | None = None
        self.drained_at: float | None = None
        self.loop = QEventLoop()
        self.timer = QTimer()
        self.timer.setTimerType(Qt.TimerType.PreciseTimer)
        self.timer.setInterval(1)
        self.timer.timeout.connect(self._on_timer_timeout)

    def _now(self) -> float:
        return self.elapsed.nsecsElapsed() / 1e6

    def _on_timer_timeout(self) -> None:
        now = self._now()
        self.gaps.append(now - self.last)
        self.last = now
        if self.burst_at is None and len(self.gaps) >= 20:
            self.burst_at = now
            self.burst()
        elif self.burst_at is not None and self.drained_at is None:
            if self.model.queued_updates == 0:
                self.drained_at = now
        elif self.drained_at is not None and now - self.drained_at > 50:
            self.loop.quit()

    def run(self) -> Stall:
        gc.collect()
        self.elapsed.start()
        self.timer.start()
        QTimer.singleShot(300_000, self.loop.quit)  # a safety net
        self.loop.exec()
        self.timer.stop()
        gaps = sorted(self.gaps[10:]) or [0.0]  # the first timeouts include the loop starting
        p99 = gaps[min(len(gaps) - 1, int(len(gaps) * 0.99))]
        drained = (
            self.drained_at - self.burst_at
            if self.drained_at is not None and self.burst_at is not None
            else float("nan")
        )
        return Stall(longest_ms=gaps[-1], p99_ms=p99, drained_ms=drained)


def bench_burst(sizes: Sizes, rng: random.Random) -> tuple[list[str], float]:
    base = make_snapshots(sizes.burst_base, 1, rng)
    added = make_snapshots(sizes.burst, sizes.burst_base + 1, rng)
    now = datetime.now(UTC)
    rescheduled = [  # ran, and are due again at a new time: each row moves
        TaskSnapshot(
            snapshot.spec,
            TaskStatus(
                state=TaskState.PENDING,
                next_run_at=now + timedelta(seconds=rng.uniform(1, 86_400)),
            ),
        )
        for snapshot in rng.sample(base, min(sizes.burst, len(base)))
    ]
    changed = [
        TaskSnapshot(
            snapshot.spec,
            TaskStatus(
                state=TaskState.PENDING,
                next_run_at=snapshot.status.next_run_at,
                waiting=WaitReason.WORKER,
            ),
        )
        for snapshot in rng.sample(base, min(sizes.burst, len(base)))
    ]
    results: dict[str, Stall] = {}
    for label, snapshots, synchronous in (
        ("adds, coalesced", added, False),
        ("adds, synchronous (baseline)", added, True),
        ("changes, coalesced", changed, False),
        ("changes, synchronous (baseline)", changed, True),
        ("moving changes, coalesced", rescheduled, False),
        ("moving changes, synchronous (baseline)", rescheduled, True),
    ):
        table = Table()
        table.model.reset_tasks(base, {})
        assert table.proxy is not None
        table.proxy.rowCount()
        settle()
        slot = table.model.on_task_added if "adds" in label else table.model.on_task_changed

        def burst(
            slot: Callable[[TaskSnapshot], None] = slot,
            snapshots: list[TaskSnapshot] = snapshots,
            synchronous: bool = synchronous,
            table: Table = table,
        ) -> None:
            for snapshot in snapshots:
                slot(snapshot)
            if synchronous:
                table.model.flush_pending()

        results[label] = _BurstProbe(table.model, burst).run()
        table.close()
    lines = [
        f"burst of {sizes.burst:,} on {sizes.burst_base:,} tasks, ms"
        f"{'longest stall':>16}{'p99 gap':>10}{'drained':>10}",
    ]
    for label, stall in results.items():
        lines.append(
            f"{label:<38}{stall.longest_ms:>16.1f}{stall.p99_ms:>10.1f}{stall.drained_ms:>10.0f}"
        )
    for kind in ("adds", "changes", "moving changes"):
        fast = results[f"{kind}, coalesced"].longest_ms
        slow = results[f"{kind}, synchronous (baseline)"].longest_ms
        lines.append(f"ratio, {kind}: synchronous / coalesced longest stall = {slow / fast:.1f}")
    return lines, max(stall.longest_ms for label, stall in results.items() if "coalesced" in label)


# ----------------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--smoke", action="store_true", help="small sizes (for the test)")
    parser.add_argument("--seed", type=int, default=1234)
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = parse_args(argv)
    sizes = SMOKE if args.smoke else FULL
    rng = random.Random(args.seed)
    app = QApplication.instance() or QApplication([])
    print(
        f"taskgui table benchmark{' (smoke)' if args.smoke else ''}: Python "
        f"{platform.python_version()}, PySide6 {pyside_version}, "
        f"platform {QApplication.platformName()}"
    )
    print()
    load_lines, sorted_load = bench_load(sizes, rng)
    for line in load_lines:
        print(line)
    print()
    sort_lines, slowest_click = bench_sort(sizes, rng)
    for line in sort_lines:
        print(line)
    print()
    tick_lines, tick_ratio = bench_tick(sizes, rng)
    for line in tick_lines:
        print(line)
    print()
    burst_lines, stall = bench_burst(sizes, rng)
    for line in burst_lines:
        print(line)
    if not args.smoke:
        print()
        tick_ok = tick_ratio <= TICK_GROWTH_GOAL
        stall_ok = stall <= STALL_GOAL_MS
        print(
            f"goal: tick does not grow ({tick_ratio:.2f}x <= {TICK_GROWTH_GOAL}x): "
            f"{'PASS' if tick_ok else 'MISS'}"
        )
        print(
            f"goal: longest stall of a {sizes.burst:,}-task burst <= {STALL_GOAL_MS:.0f} ms "
            f"({stall:.1f} ms): {'PASS' if stall_ok else 'MISS'}"
        )
        largest = sizes.load[-1]
        print(
            f"goal: sorted load of {largest:,} tasks <= {SORTED_LOAD_GOAL_S:.1f} s "
            f"({sorted_load:.3f} s): {'PASS' if sorted_load <= SORTED_LOAD_GOAL_S else 'MISS'}"
        )
        print(
            f"goal: slowest header click at {largest:,} tasks <= {CLICK_GOAL_S:.1f} s "
            f"({slowest_click:.3f} s): {'PASS' if slowest_click <= CLICK_GOAL_S else 'MISS'}"
        )
    del app
    return 0


if __name__ == "__main__":
    sys.exit(main())
