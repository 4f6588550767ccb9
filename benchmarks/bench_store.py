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
  same pragmas (WAL, ``synchronous=NORMAL``). Bulk: one ``executemany``. Cold start:
  connect, ``SELECT`` every task column, build ``(next_run_at, id)`` and ``heapify``.
- **APScheduler** 3.x (optional, ``pip install -e '.[bench]'``): a ``BackgroundScheduler``
  started paused, with a ``SQLAlchemyJobStore`` on an SQLite file given the same
  pragmas: ``add_job`` (a trivial function, ``date`` trigger), ``remove_job``,
  ``modify_job(name=...)``. It has no bulk API. Its start reads only the due jobs and
  the next run time, so its cold start is measured as ``start`` + ``get_jobs()`` (every
  job loaded, as a view listing them needs) + ``get_next_run_time``; the start alone is
  printed below the table.

Times are the median over batches of the mean per operation (so checkpoints and the
garbage collector are paid for, but one stray hiccup does not decide the result).
Benchmarks report; they never fail on a miss.

    python benchmarks/bench_store.py            # 1k / 10k / 100k, ~1 minute
    python benchmarks/bench_store.py --quick    # 1k / 10k, fewer operations
    python benchmarks/bench_store.py --smoke    # tiny: checks the script still runs
"""

from __future__ import annotations

import argparse
import gc
import heapq
import json
import pickle
import random
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))  # run from a checkout without installing

from taskgui.core.engine import Engine  # noqa: E402
from taskgui.core.recurrence import Cron, Every, Once, Recurrence  # noqa: E402
from taskgui.core.retry import RetryPolicy  # noqa: E402
from taskgui.core.status import initial_status  # noqa: E402
from taskgui.core.task import Command, TaskSpec  # noqa: E402
from taskgui.store import codec  # noqa: E402
from taskgui.store.connection import connect  # noqa: E402
from taskgui.store.recovery import open_sqlite, recover  # noqa: E402
from taskgui.store.schema import migrate  # noqa: E402
from taskgui.store.sqlite import SqliteRepository  # noqa: E402

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

# Real time, because APScheduler compares job times with its own clock; whole
# minutes, so the child processes of the cold start can be handed the same value.
NOW = datetime.now(UTC).replace(second=0, microsecond=0)
APS_FUNC = "time:time"  # a trivial, importable function: jobs never run here
GOAL_ADD_US = 50.0
GOAL_CANCEL_US = 50.0
GOAL_BULK_US = 3.0
GOAL_START_MS = 400.0
GOAL_START_AT = 100_000

COLUMNS = ", ".join(codec.TASK_COLUMNS)
RAW_INSERT = (
    f"INSERT INTO tasks ({COLUMNS}, created_at, updated_at) "
    f"VALUES ({', '.join('?' * (len(codec.TASK_COLUMNS) + 2))})"
)
RAW_UPDATE = (
    "UPDATE tasks SET "
    + ", ".join(f"{column} = ?" for column in codec.TASK_COLUMNS[1:])
    + ", updated_at = ? WHERE id = ?"
)


@dataclass(frozen=True)
class Profile:
    sizes: tuple[int, ...]
    ops: int  # operations per measured row
    batches: int
    bulk: int  # tasks in the bulk import
    bulk_repeats: int
    start_size: int
    start_repeats: int


PROFILES = {
    "full": Profile((1_000, 10_000, 100_000), 1_000, 5, 10_000, 3, 100_000, 3),
    "quick": Profile((1_000, 10_000), 300, 3, 10_000, 3, 10_000, 2),
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


def make_specs(count: int, seed: int, start: int = 0) -> list[TaskSpec]:
    """Tasks like an import produces: each its own name, command line and time."""
    rng = random.Random(seed)
    specs = []
    for index in range(start, start + count):
        specs.append(
            TaskSpec(
                name=f"sync folder {index}",
                command=Command(line=f"rsync -a ~/projects/p{index}/ /mnt/backup/p{index}/"),
                first_run_at=NOW + timedelta(seconds=60 + rng.randrange(30 * 86_400)),
                priority=rng.randrange(10),
                recurrence=_RECURRENCES[index % len(_RECURRENCES)],
                retry=_RETRIES[index % len(_RETRIES)],
                paused=index % 20 == 0,
            )
        )
    return specs


def raw_row(spec: TaskSpec) -> tuple[Any, ...]:
    """The exact INSERT parameters taskgui writes for a new task (id chosen by SQLite)."""
    now_us = codec.to_us(NOW)
    return (
        None,
        *codec.spec_values(spec),
        *codec.status_values(initial_status(spec)),
        now_us,
        now_us,
    )


def timed_batches(ops: Sequence[Callable[[], object]], batches: int) -> float:
    """Median over batches of the mean seconds per op."""
    size = max(1, len(ops) // batches)
    means = []
    perf = time.perf_counter
    for start in range(0, len(ops), size):
        chunk = ops[start : start + size]
        began = perf()
        for op in chunk:
            op()
        means.append((perf() - began) / len(chunk))
    return statistics.median(means)


# ----------------------------------------------------------------- taskgui


class TaskguiSystem:
    def __init__(self, path: Path, population: list[TaskSpec]) -> None:
        self.repo = SqliteRepository(path)
        self.repo.add_tasks(population, NOW)
        self.engine = Engine()
        recover(self.repo, self.engine, NOW)

    def add_ops(self, specs: list[TaskSpec]) -> list[Callable[[], object]]:
        repo, engine = self.repo, self.engine

        def add(spec: TaskSpec) -> None:
            engine.add(repo.add_tasks([spec], NOW)[0])

        return [lambda spec=spec: add(spec) for spec in specs]

    def cancel_ops(self, ids: list[int]) -> list[Callable[[], object]]:
        repo, engine = self.repo, self.engine

        def cancel(task_id: int) -> None:
            repo.apply(engine.cancel(task_id), NOW)

        return [lambda task_id=task_id: cancel(task_id) for task_id in ids]

    def update_ops(self, ids: list[int]) -> list[Callable[[], object]]:
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

        return [lambda spec=spec: update(spec) for spec in new_specs]

    def close(self) -> None:
        self.repo.close()


# ----------------------------------------------------------------- raw SQL


class RawSystem:
    def __init__(self, path: Path, population: list[TaskSpec]) -> None:
        self.db = connect(path)  # the same pragmas: WAL, synchronous=NORMAL
        migrate(self.db, path)  # the same schema
        self.bulk_insert([raw_row(spec) for spec in population])

    def bulk_insert(self, rows: list[tuple[Any, ...]]) -> None:
        db = self.db
        db.execute("BEGIN IMMEDIATE")
        db.executemany(RAW_INSERT, rows)
        db.execute("COMMIT")

    def _one(self, sql: str, params: tuple[Any, ...]) -> None:
        execute = self.db.execute
        execute("BEGIN IMMEDIATE")
        execute(sql, params)
        execute("COMMIT")

    def add_ops(self, specs: list[TaskSpec]) -> list[Callable[[], object]]:
        rows = [raw_row(spec) for spec in specs]
        return [lambda row=row: self._one(RAW_INSERT, row) for row in rows]

    def update_ops(self, ids: list[int], cancel: bool) -> list[Callable[[], object]]:
        """Full-row UPDATEs, as taskgui writes for both a cancel and an edit."""
        now_us = codec.to_us(NOW)
        template = make_specs(1, seed=99)[0]
        params = []
        for task_id in ids:
            spec = template.with_id(task_id)
            values = list(codec.status_values(initial_status(spec)))
            if cancel:
                values = ["cancelled", 0, None, None, None, 1, None, None, None]
            params.append((*codec.spec_values(spec), *values, now_us, task_id))
        return [lambda p=p: self._one(RAW_UPDATE, p) for p in params]

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

    def add_ops(self, specs: list[TaskSpec]) -> list[Callable[[], object]]:
        add = self.scheduler.add_job
        return [
            lambda spec=spec: add(
                APS_FUNC, "date", run_date=spec.first_run_at, id=f"new-{spec.name}", name=spec.name
            )
            for spec in specs
        ]

    def cancel_ops(self, ids: list[int]) -> list[Callable[[], object]]:
        remove = self.scheduler.remove_job
        return [lambda i=i: remove(f"job-{i - 1}") for i in ids]

    def update_ops(self, ids: list[int]) -> list[Callable[[], object]]:
        modify = self.scheduler.modify_job
        return [lambda i=i: modify(f"job-{i - 1}", name=f"renamed {i}") for i in ids]

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
    goal: float | None  # in ``unit``; None: no goal for this row


def measure_ops(size: int, profile: Profile, tmp: Path, with_aps: bool) -> list[Row]:
    population = make_specs(size, seed=size)
    new_specs = make_specs(profile.ops, seed=size + 1, start=size)
    rng = random.Random(size + 2)
    picked = rng.sample(range(1, size + 1), min(size, 2 * profile.ops))
    cancel_ids, update_ids = picked[: profile.ops], picked[profile.ops :] or picked[:1]

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
            raw_s = timed_batches(raw_ops, profile.batches)
            tg_s = timed_batches(tg_ops, profile.batches)
            aps_s = timed_batches(aps_ops, profile.batches) if aps_ops else None
            goal = {"add": GOAL_ADD_US, "cancel": GOAL_CANCEL_US}.get(name)
            rows.append(
                Row(
                    f"{name}, 1 per commit, at {_count(size)}",
                    "µs",
                    tg_s * 1e6,
                    raw_s * 1e6,
                    None if aps_s is None else aps_s * 1e6,
                    goal,
                )
            )
        return rows
    finally:
        tg.close()
        raw.close()
        if aps:
            aps.close()


def measure_bulk(profile: Profile, tmp: Path) -> Row:
    specs = make_specs(profile.bulk, seed=7)
    rows = [raw_row(spec) for spec in specs]
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
        GOAL_BULK_US,
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
    if kind == "raw":
        began = perf()
        db = connect(db_path)
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


def cold_start(kind: str, path: Path, repeats: int) -> tuple[float, float | None]:
    """Median seconds over ``repeats`` fresh processes (and APScheduler's start alone)."""
    totals, armed = [], []
    for _ in range(repeats):
        output = subprocess.run(
            [sys.executable, __file__, "--child", kind, str(path), NOW.isoformat()],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        result = json.loads(output.strip().splitlines()[-1])
        if isinstance(result, list):
            totals.append(result[0])
            armed.append(result[1])
        else:
            totals.append(result)
    return statistics.median(totals), statistics.median(armed) if armed else None


def measure_start(profile: Profile, tmp: Path, with_aps: bool) -> tuple[Row, float | None]:
    size = profile.start_size
    population = make_specs(size, seed=size)
    paths = {kind: tmp / f"start-{kind}.sqlite3" for kind in ("taskgui", "raw", "aps")}
    SqliteRepository(paths["taskgui"]).add_tasks(population, NOW)
    RawSystem(paths["raw"], population).close()
    if with_aps:
        aps_populate(paths["aps"], population)
    tg_s, _ = cold_start("taskgui", paths["taskgui"], profile.start_repeats)
    raw_s, _ = cold_start("raw", paths["raw"], profile.start_repeats)
    aps_s: float | None = None
    aps_armed: float | None = None
    if with_aps:
        aps_s, aps_armed = cold_start("aps", paths["aps"], profile.start_repeats)
    label = f"cold start at {size:,}: all loaded, timer armed"
    goal = GOAL_START_MS if size == GOAL_START_AT else None
    row = Row(
        label,
        "ms",
        tg_s * 1e3,
        raw_s * 1e3,
        None if aps_s is None else aps_s * 1e3,
        goal,
    )
    return row, None if aps_armed is None else aps_armed * 1e3


# ------------------------------------------------------------------ report


def _fmt(value: float, unit: str) -> str:
    if value >= 100:
        return f"{value:,.0f} {unit}"
    return f"{value:.1f} {unit}"


def print_table(rows: list[Row], aps_note: str) -> int:
    header = (
        f"{'operation':<52} {'taskgui':>10} {'xraw':>6}  {'raw SQL':>10}  "
        f"{'APScheduler':>11} {'xraw':>6}  {'goal':>9}  verdict"
    )
    print(header)
    print("-" * len(header))
    misses = 0
    for row in rows:
        aps = "n/a" if row.aps is None else _fmt(row.aps, row.unit)
        aps_ratio = "" if row.aps is None else f"{row.aps / row.raw:.1f}x"
        if row.goal is None:
            goal, verdict = "—", ""
        else:
            goal = f"≤ {row.goal:g} {row.unit}"
            ok = row.taskgui <= row.goal
            misses += not ok
            verdict = (
                f"PASS ({row.taskgui / row.goal:.0%} of goal)"
                if ok
                else f"MISS (+{row.taskgui / row.goal - 1:.0%})"
            )
        print(
            f"{row.label:<52} {_fmt(row.taskgui, row.unit):>10} "
            f"{row.taskgui / row.raw:>5.1f}x  {_fmt(row.raw, row.unit):>10}  "
            f"{aps:>11} {aps_ratio:>6}  {goal:>9}  {verdict}"
        )
    print()
    print(aps_note)
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
        f"{profile.ops:,} operations per row"
    )
    print()
    with tempfile.TemporaryDirectory(prefix="bench-store-", dir=args.dir) as tmp_name:
        tmp = Path(tmp_name)
        rows: list[Row] = []
        for size in profile.sizes:
            rows.extend(measure_ops(size, profile, tmp, with_aps))
        rows.append(measure_bulk(profile, tmp))
        start_row, aps_armed = measure_start(profile, tmp, with_aps)
        rows.append(start_row)
    if with_aps:
        note = (
            "APScheduler: BackgroundScheduler (started paused) + SQLAlchemyJobStore on SQLite "
            "with WAL and synchronous=NORMAL; it has no bulk API. Its cold start is start + "
            "get_jobs() + get_next_run_time; "
            f"start + get_next_run_time alone (no job loaded) took {aps_armed:,.0f} ms."
        )
    elif APSCHEDULER is None:
        note = "APScheduler columns skipped: not installed (pip install -e '.[bench]')."
    else:
        note = "APScheduler columns skipped (--without-apscheduler)."
    misses = print_table(rows, note)
    print(f"{misses} goal(s) missed" if misses else "all goals met")
    return 0


if __name__ == "__main__":
    sys.exit(main())
