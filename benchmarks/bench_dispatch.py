"""How late the scheduler starts tasks, beside APScheduler 3.x measured the same way.

Scenarios (from the issue), all measured in this run on this machine:

- **500 over 5 s**: 500 one-off tasks due uniformly over 5 s (every 10 ms), the first
  1 s after they were added; a pool of 8 workers.
- **single N s ahead**: one task added N s before it is due, nothing else pending in
  that scheduler, repeated (full: 5 x 1 s, 3 x 10 s, 2 x 60 s; quick: 3 x 1 s,
  1 x 10 s and no 60 s). With so few repetitions p99 is in effect the maximum. The
  three schedulers take turns a fraction of a second apart, so their deadlines never
  meet, and each one's wait is a single undisturbed wait.
- **throughput**: N tasks (full 2,000) all due at one moment through a pool of 4,
  from that moment until the last one is finished (and, for taskgui, committed).
  A taskgui task is a command, so this is bound by process spawns: APScheduler is
  given the same work (a job that spawns the same ``/bin/sh -c true``) and, apart, a
  pure Python no-op.
- **sustained**: recurring fixed-rate tasks, intervals spread evenly over 1-3 s (full:
  20 tasks for 120 s, about 11 runs/s; quick: 30 s; the issue's soak load), one
  scheduler after the other; APScheduler's interval jobs spawn the same
  ``/bin/sh -c true``. Lateness as above, p50 / p99 / max: where stalls on the service
  thread (commits, checkpoints, pruning, garbage collection) show.
- **hand-off**: a micro-benchmark of the bare thread pools, idle: the time from
  ``WorkerThreads.start(job)`` (the worker pool's threads) to the job beginning on a
  pool thread (taskgui), and from ``ThreadPoolExecutor.submit`` to the function beginning
  (what APScheduler's thread pool executor uses).

What "late" means (lateness = that moment minus the scheduled time, wall clock):

- **worker start** (the issue's definition, and the goal's): taskgui - the moment a
  pool thread begins the run of the command at its time: it has left every wait (the
  gate that holds it until the dispatch is committed and, for a run dispatched ahead,
  its own wait for the start time) and begins the spawn (``CommandRunner._run``
  entered); APScheduler - the moment its executor thread enters the job function.
  taskgui dispatches a run up to ``DISPATCH_AHEAD`` (5 ms) before its time when a
  worker is free, so the pool thread is usually woken early and this is the moment
  it leaves its own timed wait; otherwise it includes the wake-up, the engine, the
  SQLite commit of the dispatch and the hand-off to a worker thread. taskgui has no hook
  there, so the benchmark wraps the worker's ``run`` (to know the run id on that
  thread), the runner's ``_run`` and the worker's ``_on_started`` in this process only:
  one ``time.time()`` call each, nothing in taskgui/ is changed. (Before dispatch
  ahead, this was taken when the worker's job was entered, before the gate.)
- **dispatch**: taskgui only, ``ticket.dispatched_at - ticket.scheduled_at``, the time
  the engine records. For a run dispatched at its deadline: the timer's wake-up up to
  the start of dispatching, before the commit and the hand-off. For a run dispatched
  ahead, ``dispatched_at`` is the deadline it was held for, so this is 0 by
  construction: the scheduler's work then happens before the deadline.
- **process spawned**: taskgui only, when the command's process exists (the runner's
  ``on_started``); adds the fork/exec of ``/bin/sh -c true``, for information.

taskgui runs for real: ``SchedulerService`` over a ``SqliteRepository`` in a temporary
directory (every state change committed), ``SystemClock``, in a ``QCoreApplication``
event loop on this thread. APScheduler (optional, ``pip install -e '.[bench]'``): a
``BackgroundScheduler`` with a ``MemoryJobStore`` and one with a ``SQLAlchemyJobStore`` on
SQLite given taskgui's pragmas (WAL, synchronous=NORMAL); ``date`` triggers,
``misfire_grace_time=None``, ``coalesce=False``, a thread pool of the same size.

Goal (issue): worker-start lateness p50 <= 0.5 ms and p99 <= 1.5 ms at every horizon;
stretch: p99 no worse than APScheduler's memory store. Benchmarks report; a miss does
not fail the script.

    python benchmarks/bench_dispatch.py            # full, about 10 minutes
    python benchmarks/bench_dispatch.py --quick    # no 60 s horizon, about 3 minutes
    python benchmarks/bench_dispatch.py --smoke    # tiny: checks the script still runs
"""

from __future__ import annotations

import argparse
import concurrent.futures
import importlib
import itertools
import math
import os
import platform
import resource
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # run from a checkout without installing
os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

import PySide6  # noqa: E402
from PySide6.QtCore import QCoreApplication, QEventLoop, QTimer  # noqa: E402

from taskgui.core.clock import SystemClock  # noqa: E402
from taskgui.core.defaults import QUEUE_PER_WORKER  # noqa: E402
from taskgui.core.recurrence import Every  # noqa: E402
from taskgui.core.retry import RetryPolicy  # noqa: E402
from taskgui.core.states import RunOutcome  # noqa: E402
from taskgui.core.status import RunTicket  # noqa: E402
from taskgui.core.task import Command, TaskSpec  # noqa: E402
from taskgui.runtime import pool as pool_module  # noqa: E402
from taskgui.runtime import runner as runner_module  # noqa: E402
from taskgui.runtime.service import SchedulerService  # noqa: E402
from taskgui.runtime.worker_threads import WorkerThreads  # noqa: E402
from taskgui.store.sqlite.repository import SqliteRepository  # noqa: E402

CLOCK = SystemClock()
NOOP = Command(line="true")  # through /bin/sh, as a person's command line runs
NO_RETRY = RetryPolicy.no_retry()
SPAWN_ARGV = ("/bin/sh", "-c", "true")

GOAL_P50_MS = 0.5
GOAL_P99_MS = 1.5


@dataclass(frozen=True)
class Profile:
    spread: int  # tasks in the spread scenario
    span: float  # seconds they are spread over
    lead: float  # seconds from adding them to the first one
    singles: tuple[tuple[float, int], ...]  # (seconds ahead, repetitions)
    stagger: float  # seconds between the schedulers' turns in the single scenarios
    throughput: int
    handoffs: int
    sustained: Sustained


@dataclass(frozen=True)
class Sustained:
    """Recurring tasks at intervals spread evenly over [low, high], for ``seconds``."""

    tasks: int
    low: float
    high: float
    seconds: float

    @property
    def intervals(self) -> list[float]:
        if self.tasks == 1:
            return [self.low]
        step = (self.high - self.low) / (self.tasks - 1)
        return [round(self.low + step * index, 3) for index in range(self.tasks)]

    def plan(self, base: datetime) -> list[tuple[datetime, float]]:
        """(first run, interval) per task: first runs staggered over a second from
        ``base``, so that the tasks do not all fall due at one moment (a burst would
        measure the queue for workers, not the scheduler)."""
        return [
            (base + timedelta(seconds=round(index * 0.137 % 1.0, 3)), interval)
            for index, interval in enumerate(self.intervals)
        ]

    @property
    def label(self) -> str:
        return f"sustained {self.tasks} every {self.low:g}-{self.high:g} s for {self.seconds:g} s"


PROFILES = {
    "full": Profile(
        500,
        5.0,
        1.0,
        ((1.0, 5), (10.0, 3), (60.0, 2)),
        0.3,
        2_000,
        2_000,
        Sustained(20, 1.0, 3.0, 120.0),
    ),
    "quick": Profile(
        500, 5.0, 1.0, ((1.0, 3), (10.0, 1)), 0.3, 500, 1_000, Sustained(20, 1.0, 3.0, 30.0)
    ),
    "smoke": Profile(20, 0.5, 0.3, ((0.3, 1),), 0.05, 20, 50, Sustained(5, 1.0, 2.0, 3.0)),
}


# ------------------------------------------------------------------ statistics


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile, interpolating between closest ranks; nan when empty."""
    if not values:
        return math.nan
    ordered = sorted(values)
    rank = (len(ordered) - 1) * q / 100
    low = math.floor(rank)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (rank - low)


@dataclass
class Samples:
    """Lateness samples in seconds for one scenario, per metric and system."""

    values: dict[tuple[str, str], list[float]] = field(default_factory=dict)

    def add(self, metric: str, system: str, values: Sequence[float]) -> None:
        self.values.setdefault((metric, system), []).extend(values)

    def get(self, metric: str, system: str) -> list[float]:
        return self.values.get((metric, system), [])


# ----------------------------------------------------------------- taskgui

# Filled on pool threads by the wrapped worker (run id -> wall time).
_WORKER_STARTS: dict[int, float] = {}
_SPAWNED: dict[int, float] = {}
_CURRENT = threading.local()  # the run id a pool thread is running


@contextmanager
def instrumented_workers() -> Iterator[bool]:
    """Record when each taskgui worker begins its command and when its process exists.

    Wraps ``_RunJob.run`` and ``_RunJob._on_started`` of this process's pool module and
    ``CommandRunner._run`` (entered once the run's waits are over, right before the
    spawn), restored on exit; yields False, and records nothing, if they are not there.
    """
    job_class: Any = getattr(pool_module, "_RunJob", None)
    runner_class: Any = getattr(runner_module, "CommandRunner", None)
    original_run = getattr(job_class, "run", None)
    original_started = getattr(job_class, "_on_started", None)
    original_spawn = getattr(runner_class, "_run", None)
    if original_run is None or original_started is None or original_spawn is None:
        yield False
        return

    def run(job: Any) -> None:
        _CURRENT.run_id = job._run_id
        try:
            original_run(job)
        finally:
            _CURRENT.run_id = None

    def spawn(runner: Any, *args: Any, **kwargs: Any) -> Any:
        began = time.time()
        run_id = getattr(_CURRENT, "run_id", None)
        if run_id is not None:
            _WORKER_STARTS[run_id] = began
        return original_spawn(runner, *args, **kwargs)

    def on_started(job: Any, pid: int) -> None:
        _SPAWNED[job._run_id] = time.time()
        original_started(job, pid)

    # setattr: mypy rejects assigning to a method.
    setattr(job_class, "run", run)  # noqa: B010
    setattr(job_class, "_on_started", on_started)  # noqa: B010
    setattr(runner_class, "_run", spawn)  # noqa: B010
    try:
        yield True
    finally:
        setattr(job_class, "run", original_run)  # noqa: B010
        setattr(job_class, "_on_started", original_started)  # noqa: B010
        setattr(runner_class, "_run", original_spawn)  # noqa: B010


class TaskguiSystem:
    """The real service on a real database, driven by a local event loop."""

    def __init__(
        self, directory: Path, workers: int, queue_per_worker: int = QUEUE_PER_WORKER
    ) -> None:
        """``queue_per_worker``: as the daemon and the window run it, unless told."""
        self.repository = SqliteRepository(directory / "taskgui.sqlite3")
        self.service = SchedulerService(
            self.repository,
            CLOCK,
            workers=workers,
            kill_grace=1.0,
            queue_per_worker=queue_per_worker,
        )
        self.finished: dict[int, tuple[RunTicket, float]] = {}
        self.failures: list[str] = []
        self._wanted = 0
        self._loop: QEventLoop | None = None
        self.service.run_finished.connect(self._on_finished)
        self.service.error_occurred.connect(self.failures.append)
        self.service.start()

    def _on_finished(self, ticket: RunTicket, outcome: RunOutcome, result: Any) -> None:
        self.finished[ticket.run_id] = (ticket, time.time())
        if outcome is not RunOutcome.SUCCEEDED:
            self.failures.append(f"run {ticket.run_id}: {outcome.value} {result.error}")
        if self._loop is not None and len(self.finished) >= self._wanted:
            self._loop.quit()

    def add(self, times: Sequence[datetime]) -> None:
        specs = [
            TaskSpec(name=f"noop {index}", command=NOOP, first_run_at=at, retry=NO_RETRY)
            for index, at in enumerate(times)
        ]
        self.service.add_tasks(specs)

    def add_recurring(self, plan: Sequence[tuple[datetime, float]]) -> list[int]:
        """Fixed-rate tasks, one per (first run, interval); their ids."""
        specs = [
            TaskSpec(
                name=f"every {interval:g} s",
                command=NOOP,
                first_run_at=first,
                recurrence=Every(timedelta(seconds=interval)),
                retry=NO_RETRY,
            )
            for first, interval in plan
        ]
        return [spec.id for spec in self.service.add_tasks(specs)]

    def run_for(self, seconds: float) -> None:
        """Run the event loop for ``seconds`` (whatever is due meanwhile runs)."""
        loop = QEventLoop()
        QTimer.singleShot(int(seconds * 1000), loop.quit)
        loop.exec()

    def delete(self, task_ids: Sequence[int]) -> None:
        for task_id in task_ids:
            self.service.delete(task_id)
        self.run_until_idle(30)

    def run_until_idle(self, timeout: float) -> None:
        end = time.monotonic() + timeout
        while self.service.busy_workers and time.monotonic() < end:
            self.run_for(0.05)

    def run_until(self, count: int, timeout: float) -> None:
        """Run the event loop until ``count`` runs have finished in all."""
        if len(self.finished) < count:
            loop = QEventLoop()
            guard = QTimer()
            guard.setSingleShot(True)
            guard.timeout.connect(loop.quit)
            guard.start(int(timeout * 1000))
            self._loop, self._wanted = loop, count
            loop.exec()
            self._loop = None
            guard.stop()
        if len(self.finished) < count:
            raise RuntimeError(f"taskgui finished {len(self.finished)} of {count} runs in time")
        if self.failures:
            raise RuntimeError(f"taskgui runs failed: {self.failures[:3]}")

    def collect(self, run_ids: Sequence[int], samples: Samples) -> None:
        dispatch, start, spawn = [], [], []
        for run_id in run_ids:
            ticket, _ = self.finished[run_id]
            due = ticket.scheduled_at.timestamp()
            dispatch.append((ticket.dispatched_at - ticket.scheduled_at).total_seconds())
            if run_id in _WORKER_STARTS:
                start.append(_WORKER_STARTS[run_id] - due)
            if run_id in _SPAWNED:
                spawn.append(_SPAWNED[run_id] - due)
        samples.add("dispatch", "taskgui", dispatch)
        samples.add("start", "taskgui", start)
        samples.add("spawn", "taskgui", spawn)

    def new_runs(self, since: set[int]) -> list[int]:
        return sorted(set(self.finished) - since)

    def close(self) -> None:
        loop = QEventLoop()
        self.service.stopped.connect(loop.quit)
        QTimer.singleShot(0, lambda: self.service.shutdown(grace=1.0))
        QTimer.singleShot(10_000, loop.quit)
        loop.exec()
        self.service.pool.wait_for_done(5_000)
        self.repository.close()


# -------------------------------------------------------------- APScheduler


def apscheduler_version() -> str | None:
    try:
        module = importlib.import_module("apscheduler")
        importlib.import_module("sqlalchemy")
    except ImportError:
        return None
    return str(getattr(module, "__version__", "3.x"))


class _ApsLog:
    """Entry and exit times of APScheduler jobs, keyed by job; waitable."""

    def __init__(self) -> None:
        self.starts: dict[int, float] = {}
        self.ends: dict[int, float] = {}
        self._changed = threading.Condition()

    def record(self, key: int, started: float, ended: float) -> None:
        with self._changed:
            self.starts[key] = started
            self.ends[key] = ended
            self._changed.notify_all()

    def wait_for(self, keys: Sequence[int], timeout: float) -> None:
        with self._changed:
            if not self._changed.wait_for(lambda: all(k in self.ends for k in keys), timeout):
                done = sum(k in self.ends for k in keys)
                raise RuntimeError(f"APScheduler ran {done} of {len(keys)} jobs in time")


APS_LOG = _ApsLog()


def aps_noop(key: int) -> None:
    """An APScheduler job: its entry is APScheduler's 'worker start'."""
    started = time.time()
    APS_LOG.record(key, started, started)


class _ApsRecurringLog:
    """Entry times of APScheduler's recurring jobs, per key (a job runs many times)."""

    def __init__(self) -> None:
        self.starts: dict[int, list[float]] = {}
        self._lock = threading.Lock()

    def record(self, key: int, started: float) -> None:
        with self._lock:
            self.starts.setdefault(key, []).append(started)


APS_RECURRING = _ApsRecurringLog()


def spawn_true() -> None:
    """What a taskgui no-op task does: spawn ``/bin/sh -c true`` in a session of its
    own, its output on a pipe, and reap it."""
    subprocess.run(
        SPAWN_ARGV,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        start_new_session=True,
        check=False,
    )


def aps_recurring_spawn(key: int) -> None:
    """A recurring APScheduler job doing what a taskgui no-op task does."""
    APS_RECURRING.record(key, time.time())
    spawn_true()


def aps_spawn(key: int) -> None:
    """An APScheduler job doing what a taskgui no-op task does."""
    started = time.time()
    spawn_true()
    APS_LOG.record(key, started, time.time())


_APS_KEYS = itertools.count(1)


class ApsSystem:
    """A running BackgroundScheduler with a memory store or an SQLite store."""

    def __init__(self, sqlite_path: Path | None, workers: int) -> None:
        background = importlib.import_module("apscheduler.schedulers.background")
        executors = importlib.import_module("apscheduler.executors.pool")
        self._engine: Any = None
        store: Any
        if sqlite_path is None:
            store = importlib.import_module("apscheduler.jobstores.memory").MemoryJobStore()
        else:
            self._engine = _aps_engine(sqlite_path)
            sqlalchemy_store = importlib.import_module("apscheduler.jobstores.sqlalchemy")
            store = sqlalchemy_store.SQLAlchemyJobStore(engine=self._engine)
        self.scheduler: Any = background.BackgroundScheduler(
            jobstores={"default": store},
            executors={"default": executors.ThreadPoolExecutor(workers)},
            job_defaults={"misfire_grace_time": None, "coalesce": False, "max_instances": 1},
            timezone=UTC,
        )
        self.scheduler.start()

    def add(self, func: Callable[[int], None], times: Sequence[datetime]) -> list[int]:
        keys = []
        for at in times:
            key = next(_APS_KEYS)
            self.scheduler.add_job(func, "date", run_date=at, args=(key,), id=str(key))
            keys.append(key)
        return keys

    def seconds_per_add(self, probes: int = 10) -> float:
        """How long one add_job takes here (jobs far in the future, then removed)."""
        far = datetime.now(UTC) + timedelta(days=1)
        began = time.perf_counter()
        keys = self.add(aps_noop, [far] * probes)
        elapsed = time.perf_counter() - began
        for key in keys:
            self.scheduler.remove_job(str(key))
        return elapsed / probes

    def close(self) -> None:
        self.scheduler.shutdown(wait=True)
        if self._engine is not None:
            self._engine.dispose()


def _aps_engine(path: Path) -> Any:
    """An SQLAlchemy engine on ``path`` with taskgui's pragmas, for a like-for-like test."""
    sqlalchemy = importlib.import_module("sqlalchemy")
    engine = sqlalchemy.create_engine(f"sqlite:///{path}")

    def pragmas(connection: Any, _record: Any) -> None:
        cursor = connection.cursor()
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.close()

    sqlalchemy.event.listen(engine, "connect", pragmas)
    return engine


def aps_lateness(keys: Sequence[int], due: Sequence[datetime]) -> list[float]:
    return [APS_LOG.starts[key] - at.timestamp() for key, at in zip(keys, due, strict=True)]


# ---------------------------------------------------------------- scenarios


def spread_times(profile: Profile, lead: float) -> list[datetime]:
    base = datetime.now(UTC) + timedelta(seconds=lead)
    step = profile.span / profile.spread
    return [base + timedelta(seconds=index * step) for index in range(profile.spread)]


def measure_spread(profile: Profile, taskgui: TaskguiSystem, aps: dict[str, ApsSystem]) -> Samples:
    """The spread scenario, one scheduler after the other."""
    samples = Samples()
    before = set(taskgui.finished)
    taskgui.add(spread_times(profile, profile.lead))
    taskgui.run_until(len(before) + profile.spread, profile.lead + profile.span + 60)
    taskgui.collect(taskgui.new_runs(before), samples)
    for name, system in aps.items():
        # add_job costs a commit per job on SQLite: leave the same idle lead after it.
        estimate = system.seconds_per_add() * profile.spread * 1.5
        system.scheduler.pause()
        due = spread_times(profile, profile.lead + estimate)
        keys = system.add(aps_noop, due)
        system.scheduler.resume()
        APS_LOG.wait_for(keys, profile.lead + estimate + profile.span + 60)
        samples.add("start", name, aps_lateness(keys, due))
    return samples


def measure_single(
    ahead: float, reps: int, profile: Profile, taskgui: TaskguiSystem, aps: dict[str, ApsSystem]
) -> Samples:
    """One task ``ahead`` seconds ahead, ``reps`` times; the schedulers take turns."""
    samples = Samples()
    for _ in range(reps):
        pending: list[tuple[str, list[int], list[datetime]]] = []
        for name, system in aps.items():
            due = [datetime.now(UTC) + timedelta(seconds=ahead)]
            pending.append((name, system.add(aps_noop, due), due))
            time.sleep(profile.stagger)
        before = set(taskgui.finished)
        taskgui.add([datetime.now(UTC) + timedelta(seconds=ahead)])
        taskgui.run_until(len(before) + 1, ahead + 60)
        taskgui.collect(taskgui.new_runs(before), samples)
        for name, keys, due in pending:
            APS_LOG.wait_for(keys, 60)
            samples.add("start", name, aps_lateness(keys, due))
    return samples


def measure_sustained(
    sustained: Sustained, taskgui: TaskguiSystem, aps: dict[str, ApsSystem]
) -> Samples:
    """Recurring tasks under load for a while, one scheduler after the other.

    Each scheduler gets the same tasks (fixed rate, first due 1-2 s after they were
    added, staggered) for ``sustained.seconds``; lateness is measured as for one-off
    tasks. APScheduler's jobs spawn ``/bin/sh -c true`` like taskgui's commands, so the
    machine carries the same load. Its run times are on the grid
    ``first + k * interval``.
    """
    samples = Samples()
    before = set(taskgui.finished)
    task_ids = taskgui.add_recurring(sustained.plan(datetime.now(UTC) + timedelta(seconds=1)))
    taskgui.run_for(2 + sustained.seconds)
    taskgui.delete(task_ids)
    taskgui.collect(taskgui.new_runs(before), samples)
    for name, system in aps.items():
        plan = sustained.plan(datetime.now(UTC) + timedelta(seconds=1))
        keys = []
        for first, interval in plan:
            key = next(_APS_KEYS)
            system.scheduler.add_job(
                aps_recurring_spawn,
                "interval",
                seconds=interval,
                start_date=first,
                args=(key,),
                id=str(key),
            )
            keys.append(key)
        time.sleep(2 + sustained.seconds)
        for key in keys:
            system.scheduler.remove_job(str(key))
        late = [
            (began - first.timestamp()) % interval
            for key, (first, interval) in zip(keys, plan, strict=True)
            for began in APS_RECURRING.starts.get(key, [])
        ]
        samples.add("start", name, late)
    return samples


@dataclass(frozen=True)
class Throughput:
    spawn: dict[str, float]  # tasks per second, spawning /bin/sh -c true
    noop: dict[str, float]  # APScheduler only: a Python no-op job


BARE = "bare spawn loop"


class CpuMeter:
    """The CPU time a run cost: this process's (every thread's) and its children's, from
    ``begin`` to ``end``, divided by the runs.

    On these 2 CPUs the throughput scenario is bound by CPU time, not by waiting: the
    bare loop keeps both busy, so a system's runs per second follow from what a run
    costs it. The children's share (``sh -c true`` itself, its fork and exec) is the
    same for every system; the parent's share is the scheduler's own cost, which is
    what the goal is about. Begun after the tasks were added, so adding is left out.
    """

    def __init__(self) -> None:
        self._start: tuple[float, float] | None = None
        self.spent: tuple[float, float] | None = None  # (parent, children) seconds a run

    @staticmethod
    def _now() -> tuple[float, float]:
        own = resource.getrusage(resource.RUSAGE_SELF)
        children = resource.getrusage(resource.RUSAGE_CHILDREN)
        return own.ru_utime + own.ru_stime, children.ru_utime + children.ru_stime

    def begin(self) -> None:
        self._start = self._now()

    def end(self, runs: int) -> None:
        assert self._start is not None, "end without begin"
        parent, children = self._now()
        self.spent = ((parent - self._start[0]) / runs, (children - self._start[1]) / runs)


def bare_spawn_loop(count: int, workers: int, meter: CpuMeter | None = None) -> float:
    """The floor: ``workers`` plain threads spawning ``/bin/sh -c true`` ``count`` times
    in all (what a scheduler with no bookkeeping at all could reach); tasks per second."""
    remaining = itertools.count()
    if meter is not None:
        meter.begin()
    began = time.time()

    def work() -> None:
        while next(remaining) < count:
            spawn_true()

    threads = [threading.Thread(target=work) for _ in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.time() - began
    if meter is not None:
        meter.end(count)
    return count / elapsed


def taskgui_throughput(
    count: int, taskgui: TaskguiSystem, workers: int, meter: CpuMeter | None = None
) -> float:
    """``count`` tasks due at one moment through ``workers``; until the last one is
    finished and committed; tasks per second."""
    taskgui.service.set_workers(workers)
    before = set(taskgui.finished)
    due = datetime.now(UTC) + timedelta(seconds=0.5)
    taskgui.add([due] * count)
    if meter is not None:
        meter.begin()
    taskgui.run_until(len(before) + count, 60 + count * 0.1)
    if meter is not None:
        meter.end(count)
    last = max(taskgui.finished[run_id][1] for run_id in taskgui.new_runs(before))
    return count / (last - due.timestamp())


def aps_throughput(
    factory: Callable[[int], ApsSystem],
    func: Callable[[int], None],
    count: int,
    workers: int,
    meter: CpuMeter | None = None,
) -> float:
    """APScheduler holding ``count`` jobs, paused, then resumed; until the last one ended."""
    system = factory(workers)
    try:
        system.scheduler.pause()
        keys = system.add(func, [datetime.now(UTC)] * count)
        if meter is not None:
            meter.begin()
        released = time.time()
        system.scheduler.resume()
        APS_LOG.wait_for(keys, 60 + count * 0.1)
        if meter is not None:
            meter.end(count)
        return count / (max(APS_LOG.ends[key] for key in keys) - released)
    finally:
        system.close()


def measure_throughput(
    count: int,
    taskgui: TaskguiSystem,
    aps_factories: dict[str, Callable[[int], ApsSystem]],
    workers: int = 4,
    noop: bool = True,
) -> Throughput:
    """``count`` tasks due at one moment; from that moment to the last one finished."""
    spawn: dict[str, float] = {"taskgui": taskgui_throughput(count, taskgui, workers)}
    noops: dict[str, float] = {}
    for name, factory in aps_factories.items():
        spawn[name] = aps_throughput(factory, aps_spawn, count, workers)
        if noop:
            noops[name] = aps_throughput(factory, aps_noop, count, workers)
    spawn[BARE] = bare_spawn_loop(count, workers)
    return Throughput(spawn, noops)


def measure_handoff(count: int, workers: int = 4) -> dict[str, list[float]]:
    """Seconds from handing a job to an idle pool until it begins on a pool thread.

    The two pools take turns sample by sample: measured one block after the other,
    a spell of load on this shared machine fell on one pool's block only and decided
    the p99 (taskgui 234 us against 101 us in one such run; interleaved, the two are
    within noise of each other, see the README).
    """
    result: dict[str, list[float]] = {"taskgui": [], "APS memory": []}
    done = threading.Event()
    entered: list[float] = []
    threads = WorkerThreads(workers, name="bench-worker")

    def entry() -> None:
        entered.append(time.perf_counter())
        done.set()

    with concurrent.futures.ThreadPoolExecutor(workers) as executor:

        def taskgui_submit() -> None:
            threads.start(entry)

        def py_submit() -> None:
            executor.submit(entry)

        submits = (("taskgui", taskgui_submit), ("APS memory", py_submit))
        for index in range(count + 20):  # the first 20 start the threads: not counted
            for name, submit in submits if index % 2 else reversed(submits):
                done.clear()
                entered.clear()
                began = time.perf_counter()
                submit()
                if not done.wait(5):
                    raise RuntimeError("a pool thread never started its job")
                if index >= 20:
                    result[name].append(entered[0] - began)
                time.sleep(0.002)  # let the thread go idle again
    threads.wait_for_done(5)
    threads.close()
    return result


# ------------------------------------------------------------------ report


SYSTEMS = ("taskgui", "APS memory", "APS SQLite")


@dataclass
class Row:
    label: str
    values: dict[str, float]  # by system; already in the row's unit
    unit: str
    goal: float | None = None  # at most
    stretch: bool = False  # p99 rows: compare with APScheduler's memory store

    def verdict(self) -> str:
        value = self.values.get("taskgui", math.nan)
        if self.goal is None or math.isnan(value):
            return ""
        return "PASS" if value <= self.goal else "MISS"

    def stretch_verdict(self) -> str:
        value, aps = self.values.get("taskgui", math.nan), self.values.get("APS memory", math.nan)
        if not self.stretch or math.isnan(value) or math.isnan(aps):
            return ""
        return "met" if value <= aps else "missed"


GOALS = {50: GOAL_P50_MS, 99: GOAL_P99_MS}


def lateness_rows(scenario: str, samples: Samples, start_quantiles: Sequence[int]) -> list[Row]:
    """Rows for one scenario; quantile 100 is shown as 'max'."""
    rows = []
    metrics = (
        ("start", "worker start", start_quantiles, True),
        ("dispatch", "dispatch", (50, 99), True),
        ("spawn", "spawned", (50, 99), False),
    )
    for metric, name, quantiles, has_goal in metrics:
        for q in quantiles:
            values = {
                system: percentile(data, q) * 1000
                for system in SYSTEMS
                if (data := samples.get(metric, system))
            }
            if not values:
                continue
            rows.append(
                Row(
                    f"{scenario}: {name} {'max' if q == 100 else f'p{q}'}",
                    values,
                    "ms",
                    goal=GOALS.get(q) if has_goal else None,
                    stretch=metric == "start" and q == 99,
                )
            )
    return rows


def fmt(value: float | None, unit: str) -> str:
    if value is None or math.isnan(value):
        return "-"
    if unit == "/s":
        return f"{value:,.0f}"
    if unit == "µs":
        return f"{value:,.0f}"
    return f"{value:.3f}"


def print_table(rows: Sequence[Row]) -> list[str]:
    header = (
        f"{'scenario / metric':<50} {'unit':>4} {'taskgui':>9} {'no queue':>9} "
        f"{'APS memory':>11} "
        f"{'APS SQLite':>11} {'bare loop':>10} {'goal':>7} {'verdict':>7} {'stretch':>7} "
        f"{'tg/APS-mem':>10} {'tg/bare':>8}"
    )
    print(header)
    print("-" * len(header))
    misses = []
    for row in rows:
        tg = row.values.get("taskgui", math.nan)
        mem, bare = row.values.get("APS memory", math.nan), row.values.get(BARE, math.nan)
        verdict = row.verdict()
        if verdict == "MISS":
            misses.append(row.label)
        print(
            f"{row.label:<50} {row.unit:>4} {fmt(tg, row.unit):>9} "
            f"{fmt(row.values.get(UNQUEUED), row.unit):>9} {fmt(mem, row.unit):>11} "
            f"{fmt(row.values.get('APS SQLite'), row.unit):>11} "
            f"{fmt(bare, row.unit):>10} "
            f"{'<= ' + fmt(row.goal, row.unit) if row.goal is not None else '':>7} "
            f"{verdict:>7} {row.stretch_verdict():>7} {_ratio(tg, mem):>10} {_ratio(tg, bare):>8}"
        )
    return misses


def _ratio(value: float, base: float) -> str:
    if not base or math.isnan(value) or math.isnan(base):
        return ""
    return f"{value / base:.2f}x"


# -------------------------------------------------------------------- main


def measure_all(profile: Profile, directory: Path, with_aps: bool) -> list[Row]:
    """Every scenario, in order; the rows of the table."""
    rows: list[Row] = []
    aps: dict[str, ApsSystem] = {}
    factories: dict[str, Callable[[int], ApsSystem]] = {}
    if with_aps:
        paths = (directory / f"aps-{index}.sqlite3" for index in itertools.count())
        aps = {"APS memory": ApsSystem(None, 8), "APS SQLite": ApsSystem(next(paths), 8)}
        factories = {
            "APS memory": lambda workers: ApsSystem(None, workers),
            "APS SQLite": lambda workers: ApsSystem(next(paths), workers),
        }
    taskgui = TaskguiSystem(directory, workers=8)
    try:
        spread = measure_spread(profile, taskgui, aps)
        scenario = f"{profile.spread} over {profile.span:g} s"
        rows += lateness_rows(scenario, spread, (50, 95, 99, 100))
        pooled = Samples()
        for ahead, reps in profile.singles:
            single = measure_single(ahead, reps, profile, taskgui, aps)
            rows += lateness_rows(f"single {ahead:g} s ahead (x{reps})", single, (50, 99))
            for key, values in single.values.items():
                pooled.add(*key, values)
        if len(profile.singles) > 1:
            rows += lateness_rows("single, all horizons", pooled, (50, 99))
        sustained = measure_sustained(profile.sustained, taskgui, aps)
        rows += lateness_rows(profile.sustained.label, sustained, (50, 99, 100))
        for system in aps.values():
            system.close()
        throughput = measure_throughput(profile.throughput, taskgui, factories)
    finally:
        taskgui.close()
    rows.append(Row(f"throughput {profile.throughput:,}, spawn true", throughput.spawn, "/s"))
    if throughput.noop:
        rows.append(Row(f"throughput {profile.throughput:,}, Python no-op", throughput.noop, "/s"))
    handoff = measure_handoff(profile.handoffs)
    for q in (50, 99):
        by_system = {system: percentile(data, q) * 1e6 for system, data in handoff.items()}
        rows.append(Row(f"pool hand-off, idle, p{q}", by_system, "µs"))
    return rows


UNQUEUED = "taskgui, no queue"


def measure_throughput_rounds(
    counts: Sequence[int],
    pools: Sequence[int],
    rounds: int,
    directory: Path,
    with_aps: bool,
) -> list[Row]:
    """The throughput scenario alone, ``rounds`` times for each (tasks, pool size); the
    medians. Every round runs every system in turn, so noise on this shared machine
    falls on all of them alike; taskgui gets a new database each round. Beside taskgui
    as it runs (runs queued a worker beyond the free ones, ``QUEUE_PER_WORKER``), the
    same with no queue (``UNQUEUED``), the two taking turns in which goes first.
    Prints, after the table, the medians of each round's ratios."""
    paths = (directory / f"aps-{index}.sqlite3" for index in itertools.count())
    factories: dict[str, Callable[[int], ApsSystem]] = {}
    if with_aps:
        factories = {
            "APS memory": lambda workers: ApsSystem(None, workers),
            "APS SQLite": lambda workers: ApsSystem(next(paths), workers),
        }
    figures: dict[tuple[int, int], dict[str, list[float]]] = {}
    ratios: dict[tuple[int, int], dict[str, list[float]]] = {}
    spent: dict[tuple[int, int], dict[str, list[tuple[float, float]]]] = {}
    for round_index in range(rounds):
        for count in counts:
            for workers in pools:
                result: dict[str, float] = {}
                meters: dict[str, CpuMeter] = {}
                turns = [("taskgui", QUEUE_PER_WORKER), (UNQUEUED, 0)]
                for name, queue in turns[:: 1 if round_index % 2 == 0 else -1]:
                    place = directory / f"{name.replace(', ', '-')}-{round_index}-{count}-{workers}"
                    place.mkdir()
                    taskgui = TaskguiSystem(place, workers=workers, queue_per_worker=queue)
                    meters[name] = CpuMeter()
                    try:
                        result[name] = taskgui_throughput(count, taskgui, workers, meters[name])
                    finally:
                        taskgui.close()
                for name, factory in factories.items():
                    meters[name] = CpuMeter()
                    result[name] = aps_throughput(factory, aps_spawn, count, workers, meters[name])
                meters[BARE] = CpuMeter()
                result[BARE] = bare_spawn_loop(count, workers, meters[BARE])
                into = figures.setdefault((count, workers), {})
                for system, value in result.items():
                    into.setdefault(system, []).append(value)
                cpu_into = spent.setdefault((count, workers), {})
                for system, meter in meters.items():
                    if meter.spent is not None:
                        cpu_into.setdefault(system, []).append(meter.spent)
                by = ratios.setdefault((count, workers), {})
                for base in ("APS memory", "APS SQLite", BARE, UNQUEUED):
                    if base in result:
                        by.setdefault(base, []).append(result["taskgui"] / result[base])
                line = ", ".join(f"{name} {value:,.0f}" for name, value in result.items())
                print(
                    f"round {round_index + 1}: {count:,} tasks, pool {workers}: {line}/s; "
                    f"load {os.getloadavg()[0]:.1f}"
                )
                sys.stdout.flush()
    print()
    for (count, workers), by in ratios.items():
        shown = ", ".join(
            f"÷ {base} {percentile(values, 50):.2f}x ({min(values):.2f}-{max(values):.2f})"
            for base, values in by.items()
        )
        print(f"taskgui {count:,} tasks, pool {workers}, median of each round's ratio: {shown}")
    print()
    for (count, workers), by_system in spent.items():
        shown = ", ".join(
            f"{system} {percentile([p for p, _ in pairs], 50) * 1e6:,.0f} / "
            f"{percentile([c for _, c in pairs], 50) * 1e6:,.0f}"
            for system, pairs in by_system.items()
        )
        print(
            f"CPU a run, µs, this process / its children (medians), {count:,} tasks, "
            f"pool {workers}: {shown}"
        )
    print()
    return [
        Row(
            f"throughput {count:,}, pool {workers}, median of {rounds}",
            {system: percentile(values, 50) for system, values in by_system.items()},
            "/s",
        )
        for (count, workers), by_system in figures.items()
    ]


def throughput_notes(aps_skipped: str | None) -> list[str]:
    lines = [
        "throughput: the tasks all due at one moment, through a pool of the size shown, "
        "each running /bin/sh -c true, from that moment until the last one finished "
        "(taskgui: and committed: every start, pid and result on disk); APScheduler is "
        "timed from resume() of a paused scheduler holding every job, its jobs spawn "
        "the same command; the bare loop is that many plain threads spawning it, with "
        "no scheduler. Goal: taskgui/APS memory >= 1.0x; stretch: taskgui/bare >= 0.9x.",
    ]
    if aps_skipped:
        lines.append(f"APScheduler columns skipped: {aps_skipped}")
    return lines


def notes(profile: Profile, instrumented: bool, aps_skipped: str | None) -> list[str]:
    lines = [
        "worker start = a pool thread begins the run of the command at its time "
        "(taskgui: it has left the commit gate and, for a run dispatched ahead, its own "
        "wait for the start time, and begins the spawn; APScheduler: the job function "
        "entered) minus the scheduled time. It is what the goal is about. A taskgui run "
        "dispatched at its deadline includes the timer, the engine, the SQLite commit "
        "and the hand-off to a worker thread; one dispatched ahead (a free worker, up to 5 ms "
        "early) has done all that before, and its thread wakes on its own timer.",
        "dispatch = ticket.dispatched_at - scheduled_at (taskgui only): the timer's "
        "wake-up up to the start of dispatching, before the commit and the hand-off; "
        "0 by construction for a run dispatched ahead (dispatched_at is then the "
        "deadline it was held for).",
        "spawned = the command's process exists (runner's on_started): adds the fork/exec "
        "of /bin/sh -c true. No goal.",
        f"throughput: {profile.throughput:,} tasks due at one moment, pool of 4, until the "
        "last one finished (taskgui: and committed); 'spawn true' runs /bin/sh -c true in "
        "every system, so it is bound by process spawns; APScheduler is timed from "
        "resume() of a paused scheduler holding every job.",
        "pool hand-off: idle pool, from start()/submit() to the job's first line "
        "(taskgui column: its WorkerThreads; APS memory column: concurrent.futures, "
        "which APScheduler's ThreadPoolExecutor wraps).",
        f"{profile.sustained.label}: fixed-rate tasks first due 1-2 s after they were "
        "added (staggered), one scheduler after the other; APScheduler's interval jobs spawn "
        "/bin/sh -c true as taskgui's commands do, so each carries the same load.",
        "single N s ahead: few repetitions, so p99 is in effect the maximum.",
    ]
    if not instrumented:
        lines.append("taskgui's worker could not be wrapped: worker-start rows are missing.")
    if aps_skipped:
        lines.append(f"APScheduler columns skipped: {aps_skipped}")
    return lines


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="no 60 s horizon, fewer repetitions")
    mode.add_argument("--smoke", action="store_true", help="a tiny run, to test the script")
    parser.add_argument(
        "--without-apscheduler", action="store_true", help="skip the APScheduler columns"
    )
    parser.add_argument("--dir", type=Path, help="where to put the databases (default: tmp)")
    parser.add_argument(
        "--throughput-only",
        action="store_true",
        help="only the throughput scenario, --rounds times per --tasks and --pools",
    )
    parser.add_argument("--rounds", type=int, default=5, help="with --throughput-only")
    parser.add_argument(
        "--tasks", default="500,2000", help="with --throughput-only: task counts, comma-separated"
    )
    parser.add_argument(
        "--pools", default="4,16", help="with --throughput-only: pool sizes, comma-separated"
    )
    args = parser.parse_args(argv)

    name = "smoke" if args.smoke else "quick" if args.quick else "full"
    profile = PROFILES[name]
    aps_version = None if args.without_apscheduler else apscheduler_version()
    aps_skipped = None
    if args.without_apscheduler:
        aps_skipped = "--without-apscheduler."
    elif aps_version is None:
        aps_skipped = "not installed (pip install -e '.[bench]')."
    _app = QCoreApplication.instance() or QCoreApplication([])
    print(f"taskgui dispatch benchmark ({name})")
    print(
        f"python {platform.python_version()}, PySide6 {PySide6.__version__}, "
        f"APScheduler {aps_version or 'skipped'}; {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f}, GIL switch interval "
        f"{sys.getswitchinterval() * 1000:.0f} ms"
    )
    print()
    with (
        tempfile.TemporaryDirectory(prefix="bench-dispatch-", dir=args.dir) as tmp_name,
        instrumented_workers() as instrumented,
    ):
        if args.throughput_only:
            rows = measure_throughput_rounds(
                [int(value) for value in args.tasks.split(",")],
                [int(value) for value in args.pools.split(",")],
                args.rounds,
                Path(tmp_name),
                aps_version is not None,
            )
        else:
            rows = measure_all(profile, Path(tmp_name), aps_version is not None)
    misses = print_table(rows)
    print()
    if args.throughput_only:
        for line in throughput_notes(aps_skipped):
            print(f"- {line}")
        return 0
    for line in notes(profile, instrumented, aps_skipped):
        print(f"- {line}")
    print()
    if misses:
        print(f"goal(s) missed: {len(misses)} ({'; '.join(misses)})")
    else:
        print("all goals met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
