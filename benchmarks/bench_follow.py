"""How much a window following a daemon reads per change: incremental vs full reload.

A window that follows a schedule another process runs (``RemoteScheduler``) is told
by the change feed only *that* something was committed. It used to read and decode
every task and every task's latest run each time and diff them against what it
showed; now it reads the rows as stored, decodes only those that differ, and reads
only the ids of each task's latest finished run until one is new (``FollowedStore``).

Rows: what the daemon committed, on a schedule of N tasks with some history and a few
runs in progress:

- **output saved**: a running command's output so far (every few seconds per run);
- **one task paused**: one task's row changes;
- **a run ends**: a run's result, its task's new state;
- **first read**: a window starting to follow (every task is news).

Columns: the median time the follower takes to catch up after that change, the same
for the previous full reload (kept here as the baseline, ``FullReload``), and their
ratio (full reload / follower). Both read the same database after the same commit,
in alternating order, on this machine in this run; the ratio is what to quote.

    python benchmarks/bench_follow.py            # at 200 and 2,000 tasks
    python benchmarks/bench_follow.py --smoke    # tiny: checks the script still runs
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from PySide6.QtCore import QCoreApplication  # noqa: E402

from taskgui.core.clock import FakeClock  # noqa: E402
from taskgui.core.engine.engine import Engine  # noqa: E402
from taskgui.core.errors import TaskguiError  # noqa: E402
from taskgui.core.recurrence import Cron, Every  # noqa: E402
from taskgui.core.retry import RetryPolicy  # noqa: E402
from taskgui.core.states import RunOutcome  # noqa: E402
from taskgui.core.status import RunRecord, RunResult, TaskSnapshot  # noqa: E402
from taskgui.core.task import Command, TaskId, TaskSpec  # noqa: E402
from taskgui.runtime.remote import RemoteScheduler  # noqa: E402
from taskgui.store.sqlite.repository import SqliteRepository  # noqa: E402

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


class FullReload(RemoteScheduler):
    """The follower as it was: every task and every latest run, read and diffed."""

    def start(self) -> None:
        self.owner = self._owner_of()
        self._repository.changed()
        self._tasks = self._read_tasks()
        self._last_records = self._repository.last_runs()

    def _read_tasks(self) -> dict[TaskId, TaskSnapshot]:
        reasons = self._repository.wait_reasons()
        tasks: dict[TaskId, TaskSnapshot] = {}
        for stored in self._repository.list_tasks():
            reason = reasons.get(stored.id)
            tasks[stored.id] = (
                stored
                if reason is None
                else stored._replace(status=stored.status._replace(waiting=reason))
            )
        return tasks

    def _reload(self) -> None:
        fresh = self._read_tasks()
        last = self._repository.last_runs()
        old = self._tasks
        self._tasks = fresh
        for task_id in old.keys() - fresh.keys():
            self._last_records.pop(task_id, None)
            self.task_removed.emit(task_id)
        for task_id, snapshot in fresh.items():
            before = old.get(task_id)
            if before is None:
                self.task_added.emit(snapshot)
            elif before != snapshot:
                self.task_changed.emit(snapshot)
        for task_id, record in last.items():
            previous: RunRecord | None = self._last_records.get(task_id)
            if previous is not None and previous.id == record.id:
                continue
            self._last_records[task_id] = record
            current = fresh.get(task_id)
            if current is not None:
                self._announce_run(current, record)


def _specs(count: int) -> list[TaskSpec]:
    """A mixed schedule: intervals, cron lines, retries, keys, a few one-offs."""
    specs = []
    for index in range(count):
        kind = index % 4
        recurrence = (
            Every(timedelta(minutes=5 + index % 7))
            if kind in (0, 1)
            else Cron(f"{index % 60} * * * *", "Europe/Berlin")
            if kind == 2
            else None
        )
        specs.append(
            TaskSpec(
                name=f"task {index}",
                command=Command(line=f"backup --part {index}"),
                first_run_at=T0 + timedelta(seconds=index),
                **({"recurrence": recurrence} if recurrence is not None else {}),
                retry=RetryPolicy(max_attempts=3) if index % 3 else RetryPolicy.no_retry(),
                concurrency_key=f"k{index % 5}" if index % 2 else None,
                priority=index % 10,
            )
        )
    return specs


class Schedule:
    """The daemon's side: a store and an engine that commit one change at a time."""

    def __init__(self, path: Path, count: int) -> None:
        self.store = SqliteRepository(path)
        self.engine = Engine()
        self.now = T0
        for spec in self.store.add_tasks(_specs(count), T0):
            self.engine.add(spec)
        self.task_ids = [snapshot.id for snapshot in self.engine.snapshots()]
        # Some history: a finished run for most tasks, and a few runs going.
        self._advance(timedelta(hours=1))
        for _ in range(3):
            self.store.apply(self.engine.due(self.now, count), self.now)
            for run_id in sorted(self.engine.running_runs):
                self.end_run(run_id)
        self.store.apply(self.engine.due(self.now, 4), self.now)
        self._paused = False

    def _advance(self, delta: timedelta) -> None:
        self.now += delta

    def end_run(self, run_id: int) -> None:
        self._advance(timedelta(seconds=1))
        result = RunResult(exit_code=0, output="done\n")
        events = self.engine.finished(run_id, RunOutcome.SUCCEEDED, self.now)
        self.store.apply(events, self.now, {run_id: result})

    def save_output(self, sample: int) -> None:
        run_id = min(self.engine.running_runs)
        self.store.record_run_output(run_id, f"line {sample}\n" * 20)

    def toggle_pause(self, _: int) -> None:
        task_id = self.task_ids[len(self.task_ids) // 2]
        self._advance(timedelta(milliseconds=1))
        events = self.engine.resume(task_id) if self._paused else self.engine.pause(task_id)
        self._paused = not self._paused
        self.store.apply(events, self.now)

    def a_run_ends(self, sample: int) -> None:
        """One run ends, and its worker takes the next (a task run now), in one commit
        as the daemon does; so a run is always going for the next sample."""
        run_id = min(self.engine.running_runs)
        self._advance(timedelta(seconds=1))
        events = self.engine.finished(run_id, RunOutcome.FAILED, self.now)
        running = {ticket.task_id for ticket in self.engine.running_runs.values()}
        for offset in range(len(self.task_ids)):
            task_id = self.task_ids[(sample * 7 + offset) % len(self.task_ids)]
            if task_id in running or self.engine.snapshot(task_id).spec.paused:
                continue
            try:
                events += self.engine.run_now(task_id, self.now)
            except TaskguiError:
                continue  # finished for good, say: the next one
            break
        events += self.engine.due(self.now, 1)
        self.store.apply(events, self.now, {run_id: RunResult(exit_code=1, error="exit 1")})


def _follower(kind: type[RemoteScheduler], path: Path) -> RemoteScheduler:
    follower = kind(SqliteRepository(path), FakeClock(T0), owner=lambda: "taskgui daemon")
    follower.start()
    follower._timer.stop()  # driven by hand below, as its timer would
    return follower


def _catch_up(follower: RemoteScheduler) -> float:
    """What the follower's poll does after a change: the seconds it took."""
    start = time.perf_counter()
    follower.poll()
    return time.perf_counter() - start


def _measure_change(path: Path, change: Callable[[int], None], samples: int) -> tuple[float, float]:
    new, old = _follower(RemoteScheduler, path), _follower(FullReload, path)
    times: dict[str, list[float]] = {"new": [], "old": []}
    for sample in range(samples):
        change(sample)
        pair = ((new, "new"), (old, "old"))
        for follower, name in pair if sample % 2 else reversed(pair):
            times[name].append(_catch_up(follower))
    for follower in (new, old):
        follower.shutdown()
        follower._repository.close()
    return statistics.median(times["new"]), statistics.median(times["old"])


def _measure_first_read(path: Path, samples: int) -> tuple[float, float]:
    times: dict[str, list[float]] = {"new": [], "old": []}
    for sample in range(samples):
        kinds = ((RemoteScheduler, "new"), (FullReload, "old"))
        for kind, name in kinds if sample % 2 else reversed(kinds):
            store = SqliteRepository(path)
            follower = kind(store, FakeClock(T0), owner=lambda: "taskgui daemon")
            start = time.perf_counter()
            follower.start()
            times[name].append(time.perf_counter() - start)
            follower.shutdown()
            store.close()
    return statistics.median(times["new"]), statistics.median(times["old"])


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:.3f} ms"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="a tiny run, to test the script")
    parser.add_argument("--dir", type=Path, help="where to put the database (default: tmp)")
    args = parser.parse_args(argv)
    sizes = (200,) if args.smoke else (200, 2_000)
    samples = 5 if args.smoke else 101
    app = QCoreApplication.instance() or QCoreApplication([])
    print(f"taskgui follower benchmark ({'smoke' if args.smoke else 'full'})")
    print(f"median of {samples} catch-ups after each change; ratio = full reload / follower")
    print()
    header = f"{'change':<32} {'follower':>12} {'full reload':>12} {'ratio':>8}"
    print(header)
    print("-" * len(header))
    with tempfile.TemporaryDirectory(prefix="bench-follow-", dir=args.dir) as folder:
        for size in sizes:
            path = Path(folder) / f"follow-{size}.sqlite3"
            schedule = Schedule(path, size)
            changes: list[tuple[str, Callable[[int], None] | None]] = [
                ("output saved", schedule.save_output),
                ("one task paused", schedule.toggle_pause),
                ("a run ends", schedule.a_run_ends),
                ("first read", None),
            ]
            for name, change in changes:
                new, old = (
                    _measure_first_read(path, samples)
                    if change is None
                    else _measure_change(path, change, samples)
                )
                label = f"{name}, at {size:,} tasks"
                print(f"{label:<32} {_ms(new):>12} {_ms(old):>12} {old / new:>7.1f}x")
            schedule.store.close()
    del app
    return 0


if __name__ == "__main__":
    sys.exit(main())
