"""How much a window following a daemon reads per change: incremental vs full reload.

A window that follows a schedule another process runs (``RemoteScheduler``) is told
by the change feed only *that* something was committed. It used to read and decode
every task and every task's latest run each time and diff them against what it
showed; now it reads the rows as stored, decodes only those that differ, and reads
only the ids of each task's latest finished run until one is new (``FollowedStore``).

Rows: what the daemon committed, on a schedule of N tasks with some history and a few
runs in progress:

- **commit seen**: from a commit (a task paused, at a random moment) until the window
  has it (``task_changed``): the follower on its own thread woken by the change feed
  (the file watcher) in the "follower" column, the same follower on the 500 ms timer
  it had before in the "full reload" column (both follow the same commits);

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
import random
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

from PySide6.QtCore import QCoreApplication, QEventLoop, QTimer  # noqa: E402

from taskgui.core.clock import FakeClock  # noqa: E402
from taskgui.core.engine.engine import Engine  # noqa: E402
from taskgui.core.errors import TaskguiError  # noqa: E402
from taskgui.core.recurrence import Cron, Every  # noqa: E402
from taskgui.core.retry import RetryPolicy  # noqa: E402
from taskgui.core.states import RunOutcome  # noqa: E402
from taskgui.core.status import RunRecord, RunResult, TaskSnapshot  # noqa: E402
from taskgui.core.task import Command, TaskId, TaskSpec  # noqa: E402
from taskgui.runtime.follow_reader import FollowReader, Look  # noqa: E402
from taskgui.runtime.remote import RemoteScheduler  # noqa: E402
from taskgui.store.sqlite.repository import SqliteRepository  # noqa: E402

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
_OWNER = lambda: "taskgui daemon"  # noqa: E731


class FullReload(FollowReader):
    """The follower as it was: every task and every latest run, read and diffed."""

    def first(self) -> Look:
        look = super().first()
        self._records = self.repository.last_runs()
        return look

    def _read_tasks(self) -> dict[TaskId, TaskSnapshot]:
        reasons = self.repository.wait_reasons()
        tasks: dict[TaskId, TaskSnapshot] = {}
        for stored in self.repository.list_tasks():
            reason = reasons.get(stored.id)
            tasks[stored.id] = (
                stored
                if reason is None
                else stored._replace(status=stored.status._replace(waiting=reason))
            )
        return tasks

    def _read_changes(self) -> tuple[list[TaskSnapshot], list[TaskId], list[RunRecord]]:
        fresh = self._read_tasks()
        last = self.repository.last_runs()
        old = self._tasks
        self._tasks = fresh
        removed = list(old.keys() - fresh.keys())
        changed = [s for task_id, s in fresh.items() if old.get(task_id) != s]
        ended = []
        for task_id, record in last.items():
            previous: RunRecord | None = self._records.get(task_id)
            if previous is not None and previous.id == record.id:
                continue
            self._records[task_id] = record
            ended.append(record)
        return changed, removed, ended


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


def _follower(kind: type[FollowReader], path: Path) -> RemoteScheduler:
    """A follower driven by hand below (``poll``), as its thread would."""
    store = SqliteRepository(path)
    follower = RemoteScheduler(store, FakeClock(T0), owner=_OWNER, threaded=False)
    follower._reader = kind(store, FakeClock(T0), owner=_OWNER, answer_timeout=10)
    follower.start()
    return follower


def _catch_up(follower: RemoteScheduler) -> float:
    """What the follower's poll does after a change: the seconds it took."""
    start = time.perf_counter()
    follower.poll()
    return time.perf_counter() - start


def _measure_change(path: Path, change: Callable[[int], None], samples: int) -> tuple[float, float]:
    new, old = _follower(FollowReader, path), _follower(FullReload, path)
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
        kinds: tuple[tuple[type[FollowReader], str], ...] = (
            (FollowReader, "new"),
            (FullReload, "old"),
        )
        for kind, name in kinds if sample % 2 else reversed(kinds):
            store = SqliteRepository(path)
            follower = RemoteScheduler(store, FakeClock(T0), owner=_OWNER, threaded=False)
            follower._reader = kind(store, FakeClock(T0), owner=_OWNER, answer_timeout=10)
            start = time.perf_counter()
            follower.start()
            times[name].append(time.perf_counter() - start)
            follower.shutdown()
            store.close()
    return statistics.median(times["new"]), statistics.median(times["old"])


OLD_POLL_MS = 500  # the follower's timer before it woke on the change feed


def _spin(app: QCoreApplication, seconds: float) -> None:
    """Run the event loop for ``seconds`` (the followers' signals arrive through it)."""
    loop = QEventLoop()
    QTimer.singleShot(max(0, int(seconds * 1000)), loop.quit)
    loop.exec()


def _measure_wake(app: QCoreApplication, schedule: Schedule, samples: int) -> tuple[float, float]:
    """Seconds from a daemon's commit to the window's ``task_changed``: woken by the
    change feed on its thread (new) against a 500 ms timer polling (old), both
    following the same database and seeing the same commits, made at random moments."""
    path = schedule.store.path
    stores = [SqliteRepository(path), SqliteRepository(path)]
    new = RemoteScheduler(stores[0], FakeClock(T0), owner=_OWNER)
    old = RemoteScheduler(stores[1], FakeClock(T0), owner=_OWNER, threaded=False)
    poller = QTimer()
    poller.setInterval(OLD_POLL_MS)
    poller.timeout.connect(old.poll)
    seen: dict[str, float] = {}
    new.task_changed.connect(lambda _s: seen.setdefault("new", time.perf_counter()))
    old.task_changed.connect(lambda _s: seen.setdefault("old", time.perf_counter()))
    new.start()
    old.start()
    poller.start()
    phases = random.Random(7)
    times: dict[str, list[float]] = {"new": [], "old": []}
    for sample in range(samples):
        _spin(app, phases.uniform(0, OLD_POLL_MS / 1000))
        seen.clear()
        start = time.perf_counter()
        schedule.toggle_pause(sample)
        deadline = start + 5
        while len(seen) < 2 and time.perf_counter() < deadline:
            app.processEvents(QEventLoop.ProcessEventsFlag.WaitForMoreEvents, 5)
        for name in ("new", "old"):
            times[name].append(seen.get(name, deadline) - start)
    poller.stop()
    new.shutdown()
    old.shutdown()
    for store in stores:
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
            wake_samples = 3 if args.smoke else 41
            new, old = _measure_wake(app, schedule, wake_samples)
            label = f"commit seen, at {size:,} tasks"
            print(f"{label:<32} {_ms(new):>12} {_ms(old):>12} {old / new:>7.1f}x")
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
