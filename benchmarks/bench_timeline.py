"""Time a paint of the timeline while the number of tasks outside the view grows.

    python benchmarks/bench_timeline.py            # 50 vs 10,000 every-minute tasks
    python benchmarks/bench_timeline.py --smoke    # 50 vs 1,000, few repeats (the test)

A real ``TimelineView`` (offscreen platform unless ``QT_QPA_PLATFORM`` says otherwise)
at 1200 x 700 paints into an image; every task runs every minute and has 20 finished
runs in its history, so a lane in view draws bars, and either marks (six hours
across) or a density strip (a week across). The small schedule is the baseline; the
large one has the same lanes in view and thousands more scrolled away. The goal is a
ratio near 1: a paint computes the occurrences and reads the runs of the visible
lanes only. Medians of the repeats; the machine is shared, so read the ratio, which
both sizes share the noise of.

This is a benchmark, not a test: it exits 0 unless it crashes.
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from PySide6.QtGui import QImage, QPainter  # noqa: E402
from PySide6.QtWidgets import QApplication  # noqa: E402

from taskgui.core.clock import FakeClock  # noqa: E402
from taskgui.core.recurrence import Every  # noqa: E402
from taskgui.core.states import RunOutcome, SlotKind  # noqa: E402
from taskgui.core.status import RunRecord, TaskSnapshot, initial_status  # noqa: E402
from taskgui.core.task import Command, TaskId, TaskSpec  # noqa: E402
from taskgui.ui.timeline.runs import RunCache  # noqa: E402
from taskgui.ui.timeline.view import TimelineView  # noqa: E402

NOW = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)
WIDTH, HEIGHT = 1200, 700


class ListLanes:
    """Lanes from a list, as the table's proxy gives them."""

    def __init__(self, snapshots: list[TaskSnapshot]) -> None:
        self.snapshots = snapshots
        self._lane = {snapshot.id: lane for lane, snapshot in enumerate(snapshots)}

    def lane_count(self) -> int:
        return len(self.snapshots)

    def snapshot_at(self, lane: int) -> TaskSnapshot | None:
        return self.snapshots[lane] if 0 <= lane < len(self.snapshots) else None

    def lane_of(self, task_id: TaskId) -> int | None:
        return self._lane.get(task_id)


def schedule(count: int) -> list[TaskSnapshot]:
    snapshots = []
    for index in range(count):
        spec = TaskSpec(
            id=index + 1,
            name=f"every minute {index}",
            command=Command(line="true"),
            first_run_at=NOW - timedelta(hours=2) + timedelta(seconds=index % 60),
            recurrence=Every(timedelta(minutes=1)),
        )
        status = initial_status(spec)._replace(next_run_at=NOW + timedelta(seconds=index % 60))
        snapshots.append(TaskSnapshot(spec, status))
    return snapshots


def history(task_id: TaskId, limit: int) -> list[RunRecord]:
    runs = []
    for index in range(min(limit, 20)):
        began = NOW - timedelta(minutes=index + 1)
        runs.append(
            RunRecord(
                id=task_id * 100 + index,
                task_id=task_id,
                attempt=1,
                kind=SlotKind.OCCURRENCE,
                scheduled_at=began,
                started_at=began,
                finished_at=began + timedelta(seconds=20),
                outcome=RunOutcome.FAILED if index % 7 == 0 else RunOutcome.SUCCEEDED,
            )
        )
    return runs


def build(count: int, span: str) -> tuple[TimelineView, RunCache, QImage]:
    clock = FakeClock(NOW)
    runs = RunCache(history)
    view = TimelineView(ListLanes(schedule(count)), runs, clock)
    view.resize(WIDTH, HEIGHT)
    view.show_span(span)
    return view, runs, QImage(view.viewport().size(), QImage.Format.Format_ARGB32)


def paint_once(view: TimelineView, image: QImage) -> float:
    painter = QPainter(image)
    start = time.perf_counter()
    view.paint(painter)
    elapsed = time.perf_counter() - start
    painter.end()
    return elapsed


def compare(small: int, large: int, span: str, repeats: int) -> list[tuple[int, float, int, int]]:
    """Both sizes painted in turn (so they share the machine's noise): for each, its
    median paint, the lanes drawn and the histories read."""
    views = [build(small, span), build(large, span)]
    for view, _runs, image in views:
        paint_once(view, image)  # the first paint reads the histories: not timed
    timings: list[list[float]] = [[], []]
    for _ in range(repeats):
        for index, (view, _runs, image) in enumerate(views):
            timings[index].append(paint_once(view, image))
    return [
        (count, statistics.median(times), view.lanes_painted, runs.reads)
        for count, times, (view, runs, _image) in zip((small, large), timings, views, strict=True)
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny sizes (for the test)")
    args = parser.parse_args()
    small, large, repeats = (50, 1_000, 3) if args.smoke else (50, 10_000, 60)
    app = QApplication.instance() or QApplication(sys.argv[:1])
    print(f"taskgui timeline benchmark{' (smoke)' if args.smoke else ''}")
    print(f"python {platform.python_version()}, {platform.machine()}, {WIDTH}x{HEIGHT} view")
    print(f"{'span':<8} {'tasks':>7} {'lanes drawn':>12} {'histories':>10} {'paint ms':>9}")
    ratios = []
    for span in ("hours", "week"):
        rows = compare(small, large, span, repeats)
        for count, median, lanes, reads in rows:
            print(f"{span:<8} {count:>7,} {lanes:>12} {reads:>10} {median * 1000:>9.2f}")
        ratios.append((span, rows[1][1] / rows[0][1]))
    for span, ratio in ratios:
        print(f"ratio, {span}: {large:,} tasks / {small:,} tasks = {ratio:.2f}")
    del app
    return 0


if __name__ == "__main__":
    sys.exit(main())
