"""How fast the SQLite store is, beside the raw SQL it runs and beside APScheduler.

Rows: one durable add, cancel and update (each its own transaction) at 1k / 10k / 100k
persisted tasks; a bulk import of 10k tasks in one ``add_tasks``; and a cold start
(open the file, recover, every task loaded into the engine and the next deadline known)
at 100k tasks, measured in a fresh process so warm Python caches do not flatter it.

Columns, all measured in this run on this machine:

- **taskgui**: what the scheduler really does. Durable add is
  ``repo.add_tasks([spec], now)``, then ``engine.add``; cancel is ``engine.cancel`` and
  ``repo.apply`` of its events; update is ``engine.update`` (new name and priority) and
  ``repo.apply``. Specs are built before the clock starts: validating what a person
  typed is not the store's cost.
- **raw SQL**: the same INSERT / UPDATE statement with the same row values (prepared
  beforehand), one ``BEGIN IMMEDIATE`` ... ``COMMIT`` each, on the same schema with the
  same pragmas (WAL, ``synchronous=NORMAL``). Bulk: the same multi-row INSERT
  statements with their parameters prepared, in one ``executemany``. Cold start:
  connect, the same ``SELECT`` of ids and run times, build ``(run_at, id)`` and
  ``heapify``. A start that loads every column instead (what taskgui did before it
  deferred decoding) is measured too and printed below the table.
- **APScheduler** 3.x (optional, ``pip install -e '.[bench]'``): a ``BackgroundScheduler``
  started paused, with a ``SQLAlchemyJobStore`` on an SQLite file given the same
  pragmas: ``add_job`` (a trivial function, ``date`` trigger), ``remove_job``,
  ``modify_job(name=...)``. It has no bulk API. Its start reads only the due jobs and
  the next run time, so its cold start is measured as ``start`` + ``get_jobs()`` (every
  job loaded, as a view listing them needs) + ``get_next_run_time``; the start alone is
  printed below the table.

The three systems run their operations in alternating chunks, so a busy machine slows
them alike; a row's time is the mean per operation over the chunks, less the slowest
and fastest chunk (WAL checkpoints and the garbage collector are paid for, one stray
hiccup is not). Cold starts alternate between the systems too, and report the median.

Goals are absolute (from the issue, measured on a quiet machine where one raw WAL
commit took 17 µs, a raw executemany 0.9 µs per row and a raw load + heapify 125 ms).
The verdict also says whether taskgui is within the same multiple of this run's raw
SQL, which still means something when the machine is busier or slower than that one.
Benchmarks report; they never fail on a miss.

    python benchmarks/bench_store.py            # 1k / 10k / 100k, ~1 minute
    python benchmarks/bench_store.py --quick    # 1k / 10k, fewer operations
    python benchmarks/bench_store.py --smoke    # tiny: checks the script still runs
"""

from __future__ import annotations

import argparse
import gc
import heapq
import itertools
import json
import os
import pickle
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from taskgui.control.recovery import recover  # noqa: E402
from taskgui.core.engine.engine import Engine  # noqa: E402
from taskgui.core.recurrence import Cron, Every, Once, Recurrence  # noqa: E402
from taskgui.core.retry import RetryPolicy  # noqa: E402
from taskgui.core.task import Command, TaskSpec  # noqa: E402
from taskgui.store import codec  # noqa: E402
from taskgui.store.sqlite.connection import connect  # noqa: E402
from taskgui.store.sqlite.deferred_source import SELECT_DEFERRED  # noqa: E402
from taskgui.store.sqlite.insert import ROWS_PER_STATEMENT, insert_statement  # noqa: E402
from taskgui.store.sqlite.opening import open_sqlite  # noqa: E402
from taskgui.store.sqlite.repository import SqliteRepository  # noqa: E402
from taskgui.store.sqlite.schema import migrate  # noqa: E402

try:
    import apscheduler
    from apscheduler.job import Job
    from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
    from apscheduler.schedulers.background import BackgroundScheduler
    from apscheduler.triggers.date import DateTrigger
    from sqlalchemy import create_engine, event

    APSCHEDULER: str | None = getattr(apscheduler, "__version__", "3.x")
except ImportError:
    APSCHEDULER = None

# The benchmark's "now": real time, because APScheduler compares job times with its own
# clock, but an hour or two ahead, so no job falls due while the benchmark runs; whole
# hours, so the cold-start child processes can be handed the same value.
NOW = (datetime.now(UTC) + timedelta(hours=2)).replace(minute=0, second=0, microsecond=0)
APS_FUNC = "time:time"  # a trivial, importable function: jobs never run here


@dataclass(frozen=True)
class Goal:
    """At most ``limit`` (in the row's unit); ``raw`` is what raw SQL took when it was set."""

    limit: float
    raw: float

    @property
    def ratio(self) -> float:
        return self.limit / self.raw


GOAL_ADD = Goal(50.0, 17.0)  # µs per durable add; one raw WAL commit: 17 µs
GOAL_CANCEL = Goal(50.0, 17.0)
GOAL_BULK = Goal(3.0, 0.9)  # µs per task; raw executemany: 0.9 µs per row
GOAL_START = Goal(400.0, 125.0)  # ms; raw load + heapify: 125 ms
GOAL_START_AT = 100_000

COLUMNS = ", ".join(codec.TASK_COLUMNS)
RAW_INSERT = insert_statement(1)  # what taskgui's add runs: now, then the task's values
RAW_UPDATE = (
    "UPDATE tasks SET "
    + ", ".join(f"{column} = ?" for column in codec.TASK_COLUMNS[1:])
    + ", updated_at = ? WHERE id = ?"
)


@dataclass(frozen=True)
class Profile:
    sizes: tuple[int, ...]
    ops: int  # operations per measured row
    chunks: int  # each system's operations run in this many alternating chunks
    bulk: int  # tasks in the bulk import
    bulk_repeats: int
    start_size: int
    start_repeats: int


PROFILES = {
    "full": Profile((1_000, 10_000, 100_000), 1_000, 10, 10_000, 5, 100_000, 5),
    "quick": Profile((1_000, 10_000), 300, 6, 10_000, 3, 10_000, 3),
    "smoke": Profile((200,), 20, 2, 300, 1, 500, 1),
}


# ------------------------------------------------------------------ workload


_RECURRENCES: tuple[Recurrence, ...] = (
    Once(),
    Once(),
    Once(),
    Every(timedelta(hours=1)),
    Cron("0 3 * * *", "UTC"),
)
_RETRIES = (RetryPolicy(), RetryPolicy.no_retry())


def make_specs(
    count: int,
    seed: int,
    start: int = 0,
    *,
    one_by_one: bool = False,
    recurrences: Sequence[Recurrence] = _RECURRENCES,
) -> list[TaskSpec]:
    """Tasks like a person or an import makes: each its own name, command line and time.

    A one-off task runs at its own time within the next month. A recurring one starts
    counting when it is added: all at the same moment in an import, each at its own
    moment when added ``one_by_one`` (for a cron schedule, the store and the engine
    then each look up its first match).
    """
    rng = random.Random(seed)
    specs = []
    for index in range(start, start + count):
        recurrence = recurrences[index % len(recurrences)]
        if not recurrence.is_recurring:
            first_run_at = NOW + timedelta(seconds=60 + rng.randrange(30 * 86_400))
        else:
            first_run_at = NOW + timedelta(seconds=index if one_by_one else 0)
        specs.append(
            TaskSpec(
                name=f"sync folder {index}",
                command=Command(line=f"rsync -a ~/projects/p{index}/ /mnt/backup/p{index}/"),
                first_run_at=first_run_at,
                priority=rng.randrange(10),
                recurrence=recurrence,
                retry=_RETRIES[index % len(_RETRIES)],
                paused=index % 20 == 0,
            )
        )
    return specs


def raw_row(spec: TaskSpec) -> tuple[Any, ...]:
    """The exact INSERT parameters taskgui binds for a new task (id chosen by SQLite)."""
    return (codec.to_us(NOW), None, *codec.new_task_values(spec)[1:])


def raw_bulk_params(specs: Sequence[TaskSpec]) -> list[tuple[Any, ...]]:
    """The parameters of taskgui's bulk INSERT statements, prepared beforehand."""
    rows = [(None, *codec.new_task_values(spec)[1:]) for spec in specs]
    per = ROWS_PER_STATEMENT
    assert len(rows) % per == 0, "the bulk size must be a multiple of ROWS_PER_STATEMENT"
    return [
        (codec.to_us(NOW), *itertools.chain.from_iterable(rows[start : start + per]))
        for start in range(0, len(rows), per)
    ]


Ops = list[Callable[[], object]]


def timed_interleaved(systems: dict[str, Ops], chunks: int) -> dict[str, float]:
    """Seconds per operation for each system, their chunks run turn about.

    Per system: the mean over its chunks, without the slowest and the fastest when
    there are enough chunks to spare them.
    """
    means: dict[str, list[float]] = {name: [] for name in systems}
    order = list(systems)
    perf = time.perf_counter
    for index in range(chunks):
        for name in order:
            ops = systems[name]
            size = -(-len(ops) // chunks)
            chunk = ops[index * size : (index + 1) * size]
            if not chunk:
                continue
            began = perf()
            for op in chunk:
                op()
            means[name].append((perf() - began) / len(chunk))
        order.reverse()  # nobody always goes first
    result = {}
    for name, values in means.items():
        values.sort()
        kept = values[1:-1] if len(values) >= 4 else values
        result[name] = statistics.fmean(kept)
    return result


# ----------------------------------------------------------------- taskgui


class TaskguiSystem:
    def __init__(self, path: Path, population: list[TaskSpec]) -> None:
        self.repo = SqliteRepository(path)
        self.repo.add_tasks(population, NOW)
        self.engine = Engine()
        recover(self.repo, self.engine, NOW)
        # What the scheduler does in the background within a second of its start: from
        # then on every task is in memory, the state these operations are measured in.
        assert self.engine.hydrate() == []

    def add_ops(self, specs: list[TaskSpec]) -> Ops:
        repo, engine = self.repo, self.engine

        def add(spec: TaskSpec) -> None:
            engine.add(repo.add_tasks([spec], NOW)[0])

        return [partial(add, spec) for spec in specs]

    def cancel_ops(self, ids: list[int]) -> Ops:
        repo, engine = self.repo, self.engine

        def cancel(task_id: int) -> None:
            repo.apply(engine.cancel(task_id), NOW)

        return [partial(cancel, task_id) for task_id in ids]

    def update_ops(self, ids: list[int]) -> Ops:
        repo, engine = self.repo, self.engine
        new_specs = [
            replace(
                engine.snapshot(task_id).spec,
                name=f"renamed {task_id}",
                priority=engine.snapshot(task_id).spec.priority + 1,
            )
            for task_id in ids
        ]

        def update(spec: TaskSpec) -> None:
            repo.apply(engine.update(spec, NOW), NOW)

        return [partial(update, spec) for spec in new_specs]

    def close(self) -> None:
        self.repo.close()


# ----------------------------------------------------------------- raw SQL


class RawSystem:
    def __init__(self, path: Path, population: list[TaskSpec]) -> None:
        self.db = connect(path)  # the same pragmas: WAL, synchronous=NORMAL
        migrate(self.db, path)  # the same schema
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        db.executemany(RAW_INSERT, [raw_row(spec) for spec in population])
        db.execute("COMMIT")

    def bulk_insert(self, params: list[tuple[Any, ...]]) -> None:
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        db.executemany(insert_statement(ROWS_PER_STATEMENT), params)
        db.execute("COMMIT")

    def _one(self, sql: str, params: tuple[Any, ...]) -> None:
        execute = self.db.execute
        execute("BEGIN IMMEDIATE")
        execute(sql, params)
        execute("COMMIT")

    def add_ops(self, specs: list[TaskSpec]) -> Ops:
        rows = [raw_row(spec) for spec in specs]
        return [partial(self._one, RAW_INSERT, row) for row in rows]

    def update_ops(self, ids: list[int], cancel: bool) -> Ops:
        """Full-row UPDATEs, as taskgui writes for both a cancel and an edit."""
        now_us = codec.to_us(NOW)
        template = make_specs(1, seed=99)[0]
        status_at = len(codec.TASK_COLUMNS) - len(codec.STATUS_COLUMNS) - 1
        params = []
        for task_id in ids:
            # TASK_COLUMNS[1:] of a task's row, as _UPDATE_TASK binds them.
            row = codec.new_task_row(template.with_id(task_id), now_us)
            values = list(row[1 : len(codec.TASK_COLUMNS)])
            if cancel:
                values[status_at:] = ["cancelled", 0, None, None, None, 1, None, None, None, None]
            params.append((*values, now_us, task_id))
        return [partial(self._one, RAW_UPDATE, p) for p in params]

    def close(self) -> None:
        self.db.close()


# ------------------------------------------------------------- APScheduler


def _aps_engine(path: Path) -> Any:
    """An SQLAlchemy engine on ``path`` with taskgui's pragmas, for a like-for-like test."""
    engine = create_engine(f"sqlite:///{path}")

    @event.listens_for(engine, "connect")
    def _pragmas(connection: Any, _record: Any) -> None:
        cursor = connection.cursor()
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.close()

    return engine


def _aps_scheduler(path: Path) -> tuple[Any, Any]:
    store = SQLAlchemyJobStore(engine=_aps_engine(path))
    scheduler = BackgroundScheduler(jobstores={"default": store}, timezone=UTC)
    return scheduler, store


def aps_populate(path: Path, specs: list[TaskSpec]) -> None:
    """Write jobs exactly as ``SQLAlchemyJobStore.add_job`` would, but in one transaction.

    Adding 100,000 jobs one by one through APScheduler takes minutes; the rows (id,
    next_run_time, pickled job state) are the same either way.
    """
    scheduler, store = _aps_scheduler(path)
    store.jobs_t.create(store.engine, checkfirst=True)
    store.engine.dispose()
    rows = []
    for index, spec in enumerate(specs):
        job = Job(
            scheduler,
            id=f"job-{index}",
            func=APS_FUNC,
            trigger=DateTrigger(run_date=spec.first_run_at),
            executor="default",
            args=(),
            kwargs={},
            name=spec.name,
            misfire_grace_time=60,
            coalesce=True,
            max_instances=1,
            next_run_time=spec.first_run_at,
        )
        state = pickle.dumps(job.__getstate__(), pickle.HIGHEST_PROTOCOL)
        rows.append((job.id, spec.first_run_at.timestamp(), state))
    db = sqlite3.connect(path, isolation_level=None)
    db.execute("BEGIN")
    db.executemany("INSERT INTO apscheduler_jobs VALUES (?, ?, ?)", rows)
    db.execute("COMMIT")
    db.close()


class ApsSystem:
    def __init__(self, path: Path, population: list[TaskSpec]) -> None:
        aps_populate(path, population)
        self.scheduler, self.store = _aps_scheduler(path)
        self.scheduler.start(paused=True)  # jobs never run during the benchmark

    def add_ops(self, specs: list[TaskSpec]) -> Ops:
        add = self.scheduler.add_job
        return [
            partial(
                add,
                APS_FUNC,
                "date",
                run_date=spec.first_run_at,
                id=f"new-{spec.name}",
                name=spec.name,
            )
            for spec in specs
        ]

    def cancel_ops(self, ids: list[int]) -> Ops:
        remove = self.scheduler.remove_job
        return [partial(remove, f"job-{i - 1}") for i in ids]

    def update_ops(self, ids: list[int]) -> Ops:
        modify = self.scheduler.modify_job
        return [partial(modify, f"job-{i - 1}", name=f"renamed {i}") for i in ids]

    def close(self) -> None:
        self.scheduler.shutdown(wait=True)


# ------------------------------------------------------------- measurements


@dataclass
class Row:
    label: str
    unit: str  # "µs" or "ms"
    taskgui: float
    raw: float
    aps: float | None
    goal: Goal | None


def measure_ops(size: int, profile: Profile, tmp: Path, with_aps: bool) -> list[Row]:
    population = make_specs(size, seed=size)
    new_specs = make_specs(profile.ops, seed=size + 1, start=size, one_by_one=True)
    rng = random.Random(size + 2)
    # Cancel and update touch distinct tasks of the population, at most half each.
    count = min(profile.ops, size // 2)
    picked = rng.sample(range(1, size + 1), 2 * count)
    cancel_ids, update_ids = picked[:count], picked[count:]

    tg = TaskguiSystem(tmp / f"taskgui-{size}.sqlite3", population)
    raw = RawSystem(tmp / f"raw-{size}.sqlite3", population)
    aps = ApsSystem(tmp / f"aps-{size}.sqlite3", population) if with_aps else None
    try:
        ops: dict[str, tuple[list[Any], list[Any], list[Any] | None]] = {
            "add": (
                tg.add_ops(new_specs),
                raw.add_ops(new_specs),
                aps.add_ops(new_specs) if aps else None,
            ),
            "cancel": (
                tg.cancel_ops(cancel_ids),
                raw.update_ops(cancel_ids, cancel=True),
                aps.cancel_ops(cancel_ids) if aps else None,
            ),
            "update": (
                tg.update_ops(update_ids),
                raw.update_ops(update_ids, cancel=False),
                aps.update_ops(update_ids) if aps else None,
            ),
        }
        rows = []
        for name, (tg_ops, raw_ops, aps_ops) in ops.items():
            gc.collect()
            systems = {"taskgui": tg_ops, "raw": raw_ops}
            if aps_ops is not None:
                systems["aps"] = aps_ops
            seconds = timed_interleaved(systems, profile.chunks)
            aps_s = seconds.get("aps")
            rows.append(
                Row(
                    f"{name}, 1 per commit, at {_count(size)}",
                    "µs",
                    seconds["taskgui"] * 1e6,
                    seconds["raw"] * 1e6,
                    None if aps_s is None else aps_s * 1e6,
                    {"add": GOAL_ADD, "cancel": GOAL_CANCEL}.get(name),
                )
            )
        return rows
    finally:
        tg.close()
        raw.close()
        if aps:
            aps.close()


def measure_add_by_schedule(profile: Profile, tmp: Path) -> str:
    """One durable add by schedule kind, for the note under the table."""
    tg = TaskguiSystem(tmp / "taskgui-kinds.sqlite3", make_specs(1_000, seed=5))
    try:
        parts = []
        for label, recurrence in (
            ("once", _RECURRENCES[0]),
            ("every hour", _RECURRENCES[3]),
            ("cron", _RECURRENCES[4]),
        ):
            specs = make_specs(
                min(profile.ops, 200),
                seed=6,
                start=10_000 * (len(parts) + 1),
                one_by_one=True,
                recurrences=(recurrence,),
            )
            seconds = timed_interleaved({"taskgui": tg.add_ops(specs)}, profile.chunks)
            parts.append(f"{label} {seconds['taskgui'] * 1e6:,.0f} µs")
        return "taskgui add by schedule, at 1k: " + ", ".join(parts) + "."
    finally:
        tg.close()


def measure_bulk(profile: Profile, tmp: Path) -> Row:
    specs = make_specs(profile.bulk, seed=7)
    rows = raw_bulk_params(specs)
    tg_times, raw_times = [], []
    for attempt in range(profile.bulk_repeats):
        raw = RawSystem(tmp / f"bulk-raw-{attempt}.sqlite3", [])
        gc.collect()
        began = time.perf_counter()
        raw.bulk_insert(rows)
        raw_times.append(time.perf_counter() - began)
        raw.close()
        repo = SqliteRepository(tmp / f"bulk-tg-{attempt}.sqlite3")
        gc.collect()
        began = time.perf_counter()
        repo.add_tasks(specs, NOW)
        tg_times.append(time.perf_counter() - began)
        repo.close()
    per = 1e6 / profile.bulk
    return Row(
        f"bulk import, {profile.bulk:,} in one add_tasks (per task)",
        "µs",
        statistics.median(tg_times) * per,
        statistics.median(raw_times) * per,
        None,
        GOAL_BULK,
    )


def _count(size: int) -> str:
    return f"{size // 1000}k" if size >= 1000 and size % 1000 == 0 else f"{size:,}"


def _child(kind: str, path: str, now_text: str) -> float | tuple[float, float]:
    """Run one cold start in this (fresh) process; return seconds."""
    global NOW  # noqa: PLW0603 - the parent's NOW, so no task is due in the child either
    NOW = datetime.fromisoformat(now_text)
    db_path = Path(path)
    perf = time.perf_counter
    if kind == "taskgui":
        began = perf()
        repo, _moved = open_sqlite(db_path, NOW)
        engine = Engine()
        recover(repo, engine, NOW)
        deadline = engine.next_deadline()
        elapsed = perf() - began
        assert deadline is not None and len(engine) > 0
        return elapsed
    if kind in ("raw", "raw-full"):
        began = perf()
        db = connect(db_path)
        if kind == "raw":  # the SELECT taskgui's start runs
            heap = [(at, task_id) for task_id, at in db.execute(SELECT_DEFERRED) if at is not None]
        else:  # every column of every task, as a start that decodes everything needs
            rows = db.execute(f"SELECT {COLUMNS} FROM tasks ORDER BY id").fetchall()
            heap = [(row[15], row[0]) for row in rows if row[15] is not None]
        heapq.heapify(heap)
        elapsed = perf() - began
        assert heap
        return elapsed
    began = perf()
    scheduler, store = _aps_scheduler(db_path)
    scheduler.start(paused=True)
    next_run = store.get_next_run_time()
    armed = perf() - began
    jobs = scheduler.get_jobs()
    elapsed = perf() - began
    assert next_run is not None and jobs
    return elapsed, armed


def _cold_start(kind: str, path: Path) -> list[float]:
    output = subprocess.run(
        [sys.executable, __file__, "--child", kind, str(path), NOW.isoformat()],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    result = json.loads(output.strip().splitlines()[-1])
    return [float(value) for value in (result if isinstance(result, list) else [result])]


def measure_start(profile: Profile, tmp: Path, with_aps: bool) -> tuple[Row, float | None, float]:
    """Cold starts in fresh processes, the systems taking turns; medians in ms.

    Returns the row, APScheduler's start alone, and a raw load of every column."""
    size = profile.start_size
    population = make_specs(size, seed=size)
    paths = {kind: tmp / f"start-{kind}.sqlite3" for kind in ("taskgui", "raw", "aps")}
    repo = SqliteRepository(paths["taskgui"])
    repo.add_tasks(population, NOW)
    repo.close()
    RawSystem(paths["raw"], population).close()
    paths["raw-full"] = paths["raw"]
    kinds = ["taskgui", "raw", "raw-full"]
    if with_aps:
        aps_populate(paths["aps"], population)
        kinds.append("aps")
    results: dict[str, list[list[float]]] = {kind: [] for kind in kinds}
    for repeat in range(profile.start_repeats):
        for kind in kinds if repeat % 2 == 0 else reversed(kinds):
            results[kind].append(_cold_start(kind, paths[kind]))

    def median_ms(kind: str, index: int = 0) -> float:
        return statistics.median(result[index] for result in results[kind]) * 1e3

    row = Row(
        f"cold start at {_count(size)}: all known, timer armed",
        "ms",
        median_ms("taskgui"),
        median_ms("raw"),
        median_ms("aps") if with_aps else None,
        GOAL_START if size == GOAL_START_AT else None,
    )
    return row, median_ms("aps", 1) if with_aps else None, median_ms("raw-full")


def measure_aps_defaults(tmp: Path, count: int) -> float:
    """µs per add_job with SQLAlchemy's SQLite defaults (rollback journal, synchronous=FULL)."""
    store = SQLAlchemyJobStore(url=f"sqlite:///{tmp / 'aps-defaults.sqlite3'}")
    scheduler = BackgroundScheduler(jobstores={"default": store}, timezone=UTC)
    scheduler.start(paused=True)
    try:
        specs = make_specs(count, seed=3)
        began = time.perf_counter()
        for spec in specs:
            scheduler.add_job(
                APS_FUNC, "date", run_date=spec.first_run_at, id=spec.name, name=spec.name
            )
        return (time.perf_counter() - began) / count * 1e6
    finally:
        scheduler.shutdown(wait=True)


# ------------------------------------------------------------------ report


def _fmt(value: float, unit: str) -> str:
    if value >= 100:
        return f"{value:,.0f} {unit}"
    return f"{value:.1f} {unit}"


def _verdict(row: Row) -> tuple[str, str, bool]:
    """(goal text, verdict text, met?) for a row."""
    goal = row.goal
    if goal is None:
        return "—", "", True
    text = f"≤ {goal.limit:g} {row.unit}"
    if row.taskgui <= goal.limit:
        return text, f"PASS ({row.taskgui / goal.limit:.0%} of goal)", True
    verdict = f"MISS (+{row.taskgui / goal.limit - 1:.0%})"
    ratio = row.taskgui / row.raw
    if ratio <= goal.ratio:
        verdict += f"; within {goal.ratio:.1f}x raw"
    else:
        verdict += f"; over {goal.ratio:.1f}x raw"
    return text, verdict, False


def print_table(rows: list[Row], notes: list[str]) -> int:
    header = (
        f"{'operation':<46} {'taskgui':>10} {'xraw':>6}  {'raw SQL':>10}  "
        f"{'APScheduler':>11} {'xraw':>6}  {'goal':>9}  verdict"
    )
    print(header)
    print("-" * len(header))
    misses = 0
    for row in rows:
        aps = "n/a" if row.aps is None else _fmt(row.aps, row.unit)
        aps_ratio = "" if row.aps is None else f"{row.aps / row.raw:.1f}x"
        goal, verdict, met = _verdict(row)
        misses += not met
        print(
            f"{row.label:<46} {_fmt(row.taskgui, row.unit):>10} "
            f"{row.taskgui / row.raw:>5.1f}x  {_fmt(row.raw, row.unit):>10}  "
            f"{aps:>11} {aps_ratio:>6}  {goal:>9}  {verdict}"
        )
    print()
    for note in notes:
        print(textwrap.fill(note, width=len(header), subsequent_indent="  "))
    return misses


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--quick", action="store_true", help="1k and 10k only, fewer operations")
    mode.add_argument("--smoke", action="store_true", help="a tiny run, to test the script")
    parser.add_argument(
        "--without-apscheduler", action="store_true", help="skip the APScheduler column"
    )
    parser.add_argument("--dir", type=Path, help="where to put the databases (default: tmp)")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.child:
        print(json.dumps(_child(*args.child)))
        return 0

    name = "smoke" if args.smoke else "quick" if args.quick else "full"
    profile = PROFILES[name]
    with_aps = APSCHEDULER is not None and not args.without_apscheduler
    print(f"taskgui store benchmark ({name})")
    print(
        f"python {sys.version.split()[0]}, sqlite {sqlite3.sqlite_version}, "
        f"APScheduler {APSCHEDULER if with_aps else 'skipped'}; "
        f"{profile.ops:,} operations per row, {os.cpu_count()} CPUs, "
        f"load average {os.getloadavg()[0]:.1f}"
    )
    print()
    notes = []
    with tempfile.TemporaryDirectory(prefix="bench-store-", dir=args.dir) as tmp_name:
        tmp = Path(tmp_name)
        rows: list[Row] = []
        for size in profile.sizes:
            rows.extend(measure_ops(size, profile, tmp, with_aps))
        rows.append(measure_bulk(profile, tmp))
        start_row, aps_armed, raw_full_ms = measure_start(profile, tmp, with_aps)
        rows.append(start_row)
        notes.append(
            "Cold start: taskgui reads each task's id and next run time, arms the timer, "
            "and decodes a task's definition when it is first needed (the scheduler "
            "reads the rest in the background right after). Raw SQL reading every "
            f"column of every task and heapifying took {raw_full_ms:,.0f} ms in this run."
        )
        notes.append(measure_add_by_schedule(profile, tmp))
        if with_aps:
            defaults_us = measure_aps_defaults(tmp, min(profile.ops, 200))
            notes.append(
                "APScheduler: BackgroundScheduler (started paused) + SQLAlchemyJobStore on "
                "SQLite given taskgui's pragmas (WAL, synchronous=NORMAL), so both pay for "
                "the same durability; with SQLAlchemy's defaults (rollback journal, "
                f"synchronous=FULL) one add_job took {defaults_us:,.0f} µs. It has no bulk "
                "API. Its start() reads only due jobs and the next run time "
                f"({aps_armed:,.0f} ms); its cold start above adds get_jobs(), every job "
                "loaded, as taskgui loads every task."
            )
    if not with_aps:
        notes.append(
            "APScheduler columns skipped: "
            + (
                "not installed (pip install -e '.[bench]')."
                if APSCHEDULER is None
                else "--without-apscheduler."
            )
        )
    notes.append(
        "Goals are absolute; 'within Nx raw' means taskgui kept the multiple of raw SQL "
        "that the goal allowed on the machine where it was set."
    )
    misses = print_table(rows, notes)
    print(f"{misses} goal(s) missed" if misses else "all goals met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
