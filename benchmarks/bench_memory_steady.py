"""The daemon's memory once its tasks have run, beside APScheduler 3's memory store.

    python benchmarks/bench_memory_steady.py                 # 100k ran once; 10k ran 3 times
    python benchmarks/bench_memory_steady.py --once 20000 --recurring 2000
    python benchmarks/bench_memory_steady.py --smoke         # 200 and 50 tasks: still runs

``bench_memory.py`` measures a daemon just started, whose tasks are ids and run times
(``core/engine/cold.py``). This measures the rest of its life: after the tasks ran.

* **ran once, idle again**: ``--once`` tasks, each daily, all due within the first
  minute; the daemon runs every one of them (``/bin/sh -c true``), then they wait a day.
  The resident set is read once the last run is recorded and the daemon has had its
  next look (within 30 s, when it gives back the tasks that will not run within the
  minute: ``core/engine/give_back.py``), and read again 5 s later.
* **recurring, a few runs each**: ``--recurring`` tasks every 30 s, measured after
  each ran ``--runs`` times; they are due within the minute, so they stay whole.

APScheduler 3 (``pip install -e '.[bench]'``): a ``BackgroundScheduler`` with its
``MemoryJobStore`` and a pool of 4 threads, in a fresh process, given the same tasks
as ``interval`` jobs (id, name, the command line as the argument, no misfire limit),
each running a Python no-op (it spawns nothing: only the scheduler's own memory
counts); its VmRSS after the same runs and a full collection. Both figures are whole
processes (interpreter and libraries included), and the empty process of each is
measured too; the ratio is of the totals (goal: taskgui at most half).

The machine is shared: the load average is printed. This is a benchmark, not a test:
it exits 0 unless it crashes.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
for path in (ROOT, ROOT / "benchmarks"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))  # run from a checkout without installing

from bench_memory import APSCHEDULER, daemon_on, mib, new_account, vm_status  # noqa: E402

try:
    from apscheduler.executors.pool import ThreadPoolExecutor
    from apscheduler.schedulers.background import BackgroundScheduler
except ImportError:  # pip install -e '.[bench]' for the peer's figures (APSCHEDULER is None)
    pass

from taskgui.core.recurrence import Every  # noqa: E402
from taskgui.core.retry import RetryPolicy  # noqa: E402
from taskgui.core.task import Command, TaskSpec  # noqa: E402
from taskgui.store.sqlite.repository import SqliteRepository  # noqa: E402

DAY = timedelta(days=1)
EVERY = timedelta(seconds=30)  # the recurring workload's interval
LEAD = timedelta(seconds=20)  # the first runs start this long after seeding
WINDOW = 60  # seconds over which the first runs are due
LOOK = 40.0  # seconds after the last run: the daemon's next look (30 s) has come
RUN_TIMEOUT = 1_800.0
READY = ("the schedule is read", "every stored task is loaded")


@dataclass(frozen=True)
class Workload:
    name: str
    count: int
    interval: timedelta
    runs: int  # each task's runs before the measure


def specs_for(load: Workload, start: datetime) -> list[TaskSpec]:
    """Each task its own name and command line, first due within ``WINDOW`` s."""
    every = Every(load.interval)
    return [
        TaskSpec(
            name=f"sync folder {index}",
            command=Command(line="true"),
            first_run_at=start + timedelta(seconds=index * WINDOW / load.count),
            priority=index % 10,
            recurrence=every,
            retry=RetryPolicy() if index % 2 else RetryPolicy.no_retry(),
        )
        for index in range(load.count)
    ]


# ------------------------------------------------------------------ taskgui


def finished_runs(db: Path) -> int:
    """Runs the daemon has recorded as ended (read-only, beside its connection)."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True, timeout=10) as connection:
        [(count,)] = connection.execute(
            "SELECT count(*) FROM runs WHERE started_at IS NOT NULL AND finished_at IS NOT NULL"
        ).fetchall()
    return int(count)


@dataclass(frozen=True)
class Measure:
    rss: int
    hwm: int
    seconds: float  # from the first run due to the last run recorded


def taskgui_after_runs(folder: Path, load: Workload | None) -> Measure:
    """The daemon on a fresh account; None: no tasks (the empty process)."""
    env = new_account(folder)
    db = folder / "tasks.sqlite3"
    start = datetime.now(UTC) + LEAD
    if load is not None:
        repository = SqliteRepository(db)
        specs = specs_for(load, start)
        for first in range(0, len(specs), 50_000):
            repository.add_tasks(specs[first : first + 50_000], datetime.now(UTC))
        repository.close()
    stderr_path = folder / "daemon.stderr"
    with daemon_on(db, env, stderr_path) as daemon:
        deadline = time.monotonic() + RUN_TIMEOUT
        wanted = 0 if load is None else load.count * load.runs

        def alive() -> None:
            if daemon.poll() is not None:
                raise RuntimeError(
                    f"the daemon exited with {daemon.returncode}:\n"
                    + stderr_path.read_text(errors="replace")[-2000:]
                )
            if time.monotonic() > deadline:
                raise RuntimeError(f"the runs took over {RUN_TIMEOUT:.0f} s")

        while not any(line in stderr_path.read_text(errors="replace") for line in READY):
            alive()
            time.sleep(0.2)
        while wanted and finished_runs(db) < wanted:
            alive()
            time.sleep(1.0)
        took = max(0.0, (datetime.now(UTC) - start).total_seconds())
        time.sleep(LOOK if load is not None else 2.0)
        alive()
        time.sleep(5.0)
        status = vm_status(daemon.pid)
        return Measure(status["VmRSS"], status["VmHWM"], took)


# ------------------------------------------------------------------ APScheduler


def aps_child(count: int, interval_s: float, runs: int) -> None:
    """In a fresh process: APScheduler 3's memory store running ``count`` jobs until
    each ran ``runs`` times; prints its memory and the seconds the runs took."""
    done = threading.Event()
    ran = [0]
    wanted = count * runs
    lock = threading.Lock()

    def job(_line: str) -> None:
        with lock:
            ran[0] += 1
            if ran[0] >= wanted:
                done.set()

    scheduler = BackgroundScheduler(
        timezone=UTC,
        executors={"default": ThreadPoolExecutor(4)},
        job_defaults={"misfire_grace_time": None, "coalesce": True, "max_instances": 1},
    )
    scheduler.start(paused=True)
    start = datetime.now(UTC) + LEAD
    if count:
        load = Workload("peer", count, timedelta(seconds=interval_s), runs)
        for index, spec in enumerate(specs_for(load, start)):
            scheduler.add_job(
                job,
                "interval",
                seconds=interval_s,
                start_date=spec.first_run_at,
                args=(spec.command.line,),
                id=str(index),
                name=spec.name,
            )
    scheduler.resume()
    # Until every run is done, or until no job is due before the last run could be
    # (what APScheduler skipped it will not run: the runs are then counted short).
    last_due = start + timedelta(seconds=WINDOW) + (runs - 1) * timedelta(seconds=interval_s)
    give_up = time.monotonic() + RUN_TIMEOUT
    while count and not done.wait(5.0) and time.monotonic() < give_up:
        upcoming = [job.next_run_time for job in scheduler.get_jobs() if job.next_run_time]
        if datetime.now(UTC) > last_due + timedelta(seconds=5) and all(
            at > last_due for at in upcoming
        ):
            break
    took = max(0.0, (datetime.now(UTC) - start).total_seconds())
    scheduler.pause()
    time.sleep(1.0)  # the last runs' threads finish their bookkeeping
    gc.collect()
    print(json.dumps({**vm_status(os.getpid()), "seconds": took, "ran": ran[0]}))
    scheduler.shutdown(wait=False)


def aps_after_runs(load: Workload | None) -> Measure | None:
    if APSCHEDULER is None:
        return None
    count, interval, runs = (0, 1.0, 0) if load is None else (
        load.count, load.interval.total_seconds(), load.runs
    )  # fmt: skip
    result = subprocess.run(
        [sys.executable, __file__, "--aps-child", str(count), str(interval), str(runs)],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0:
        raise RuntimeError(result.stderr[-2000:])
    found = json.loads(result.stdout.strip().splitlines()[-1])
    if load is not None and found["ran"] < load.count * load.runs:
        print(f"note: APScheduler ran {found['ran']} of {load.count * load.runs} runs", flush=True)
    return Measure(found["VmRSS"], found["VmHWM"], found["seconds"])


# ------------------------------------------------------------------ main


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="200 and 50 tasks")
    parser.add_argument("--once", type=int, default=100_000, help="daily tasks run once")
    parser.add_argument("--recurring", type=int, default=10_000, help="tasks every 30 s")
    parser.add_argument("--runs", type=int, default=3, help="runs of each recurring task")
    parser.add_argument("--aps-child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.aps_child is not None:
        count, interval, runs = args.aps_child
        aps_child(int(count), float(interval), int(runs))
        return 0
    once, recurring = (200, 50) if args.smoke else (args.once, args.recurring)
    loads = [
        Workload(f"{once:,} daily tasks, each ran once", once, DAY, 1),
        Workload(f"{recurring:,} tasks every 30 s, {args.runs} runs each", recurring,
                 EVERY, args.runs),
    ]  # fmt: skip
    loads_before = os.getloadavg()[0]
    rows = []
    with tempfile.TemporaryDirectory(prefix="taskgui-bench-steady-") as tmp:
        folder = Path(tmp)
        base = taskgui_after_runs(folder / "empty", None)
        aps_base = aps_after_runs(None)
        for index, load in enumerate(loads):
            ours = taskgui_after_runs(folder / f"daemon-{index}", load)
            print(f"{load.name}: taskgui {mib(ours.rss)} ({ours.seconds:.0f} s)", flush=True)
            theirs = aps_after_runs(load)
            rows.append((load, ours, theirs))
    print(
        f"bench_memory_steady: Python {platform.python_version()} on {platform.machine()}; "
        f"APScheduler {APSCHEDULER or 'not installed'}; load average "
        f"{loads_before:.2f} at the start, {os.getloadavg()[0]:.2f} at the end"
    )
    aps_empty = mib(aps_base.rss if aps_base else None)
    print(f"empty process: taskgui daemon {mib(base.rss)}, APScheduler {aps_empty}")
    print()
    print(
        f"{'workload':<42}  {'taskgui RSS':>12}  {'per task':>9}  {'peak':>11}  "
        f"{'APScheduler':>12}  {'per task':>9}  {'ratio':>6}  runs took (taskgui / APS)"
    )
    for load, ours, theirs in rows:
        per = (ours.rss - base.rss) / load.count
        their_per = ratio = "n/a"
        took = f"{ours.seconds:.0f} s"
        if theirs is not None and aps_base is not None:
            their_per = f"{(theirs.rss - aps_base.rss) / load.count:.0f} B"
            ratio = f"{ours.rss / theirs.rss:.2f}x"
            took += f" / {theirs.seconds:.0f} s"
        print(
            f"{load.name:<42}  {mib(ours.rss):>12}  {per:>7.0f} B  {mib(ours.hwm):>11}  "
            f"{mib(theirs.rss if theirs else None):>12}  {their_per:>9}  {ratio:>6}  {took}"
        )
    print()
    print("goal: the daemon's RSS at most half of APScheduler's memory store (ratio <= 0.50x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
