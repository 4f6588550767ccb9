"""APScheduler 4 on PostgreSQL, measured the way bench_postgres.py measures taskgui.

APScheduler 4 (a pre-release) is not a dependency of taskgui: this file runs under a
Python that has it (``pip install --pre 'apscheduler>=4.0.0a6' sqlalchemy psycopg
asyncpg greenlet sniffio`` in a throwaway venv), started by bench_postgres.py with
``--apscheduler4 PYTHON``. It imports nothing of taskgui. Its SQLAlchemy data store
with the asyncpg driver is its fastest configuration measured here (the psycopg sync
engine was 1.7x slower to add); several schedulers share the store, woken by its
PostgreSQL event broker.

    python peer_apscheduler4.py add-cancel DSN OPS CHUNKS
        -> "add_us raw_add_us remove_us raw_remove_us" (medians over chunks)
    python peer_apscheduler4.py seed DSN SCHEDULES AT_EPOCH
    python peer_apscheduler4.py node DSN LOG NAME          (runs until SIGTERM)
"""

from __future__ import annotations

import logging
import os
import signal
import statistics
import sys
import threading
import time
from datetime import UTC, datetime, timedelta

import psycopg
from apscheduler import Scheduler
from apscheduler.datastores.sqlalchemy import SQLAlchemyDataStore
from apscheduler.eventbrokers.asyncpg import AsyncpgEventBroker
from apscheduler.triggers.date import DateTrigger
from psycopg.types.json import Jsonb
from sqlalchemy.ext.asyncio import create_async_engine

_LOG: list[str] = [""]  # the file each firing appends to (set by ``node``)


def fire(key: str) -> None:
    """The job: one line per firing, appended (O_APPEND writes of a line are atomic)."""
    fd = os.open(_LOG[0], os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, f"{key} {os.getpid()} {time.time():.6f}\n".encode())
    finally:
        os.close(fd)


def noop() -> None:
    return None


def _url(dsn: str) -> str:
    return dsn.replace("postgresql://", "postgresql+asyncpg://", 1)


def _scheduler(dsn: str, **kwargs: object) -> Scheduler:
    engine = create_async_engine(_url(dsn))
    broker = AsyncpgEventBroker.from_async_sqla_engine(engine)
    return Scheduler(SQLAlchemyDataStore(engine), broker, **kwargs)  # type: ignore[arg-type]


def add_cancel(dsn: str, ops: int, chunks: int) -> None:
    """Median µs per add and per remove of a schedule, and of the raw baseline: a
    psycopg INSERT (then DELETE) + COMMIT of the same row in a copy of its table,
    chunk by chunk in turn with APScheduler's, so both meet the same moments."""
    later = datetime.now(UTC) + timedelta(hours=2)
    per_chunk = max(1, ops // chunks)
    times: dict[str, list[float]] = {
        name: [] for name in ("add", "remove", "raw_add", "raw_remove")
    }
    with _scheduler(dsn) as scheduler, psycopg.connect(dsn) as raw:
        scheduler.add_schedule(noop, DateTrigger(later), id="model")
        raw.execute("CREATE TABLE raw_schedules (LIKE schedules INCLUDING ALL)")
        raw.execute("INSERT INTO raw_schedules SELECT * FROM schedules WHERE id = 'model'")
        raw.commit()
        columns = [row[0] for row in raw.execute(
            "SELECT column_name FROM information_schema.columns "
            "WHERE table_name = 'raw_schedules' ORDER BY ordinal_position"
        )]  # fmt: skip
        [model] = raw.execute("SELECT * FROM raw_schedules").fetchall()
        raw.execute("DELETE FROM raw_schedules")
        raw.commit()
        insert = (
            f"INSERT INTO raw_schedules ({', '.join(columns)}) "
            f"VALUES ({', '.join(['%s'] * len(columns))})"
        )
        at_id = columns.index("id")
        index = 0
        for _ in range(chunks):
            ids = [f"s{index + offset}" for offset in range(per_chunk)]
            index += per_chunk
            begun = time.perf_counter()
            for schedule_id in ids:
                scheduler.add_schedule(noop, DateTrigger(later), id=schedule_id)
            times["add"].append(time.perf_counter() - begun)
            begun = time.perf_counter()
            for schedule_id in ids:
                row = [Jsonb(value) if isinstance(value, dict) else value for value in model]
                row[at_id] = schedule_id
                raw.execute(insert, row)
                raw.commit()
            times["raw_add"].append(time.perf_counter() - begun)
            begun = time.perf_counter()
            for schedule_id in ids:
                scheduler.remove_schedule(schedule_id)
            times["remove"].append(time.perf_counter() - begun)
            begun = time.perf_counter()
            for schedule_id in ids:
                raw.execute("DELETE FROM raw_schedules WHERE id = %s", (schedule_id,))
                raw.commit()
            times["raw_remove"].append(time.perf_counter() - begun)
    medians = {name: statistics.median(values) / per_chunk * 1e6 for name, values in times.items()}
    print(" ".join(f"{medians[name]:.1f}" for name in ("add", "raw_add", "remove", "raw_remove")))


def seed(dsn: str, schedules: int, at_epoch: float) -> None:
    moment = datetime.fromtimestamp(at_epoch, UTC)
    with _scheduler(dsn) as scheduler:
        scheduler.configure_task("fire", func=fire, max_running_jobs=None)
        for index in range(schedules):
            # A trigger is stateful (it remembers that it fired): one each.
            trigger = DateTrigger(moment)
            scheduler.add_schedule("fire", trigger, id=f"f{index}", args=(f"f{index}",))


def node(dsn: str, log: str, name: str) -> None:
    logging.basicConfig(level=logging.DEBUG if os.environ.get("APS_DEBUG") else logging.WARNING)
    _LOG[0] = log
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    with _scheduler(dsn, identity=name, max_concurrent_jobs=4) as scheduler:
        scheduler.configure_task("fire", func=fire, max_running_jobs=None)
        scheduler.start_in_background()
        print("ready", flush=True)
        stop.wait()
        scheduler.stop()


def main(argv: list[str]) -> int:
    command, dsn, *rest = argv
    if command == "add-cancel":
        add_cancel(dsn, int(rest[0]), int(rest[1]))
    elif command == "seed":
        seed(dsn, int(rest[0]), float(rest[1]))
    elif command == "node":
        node(dsn, rest[0], rest[1])
    else:
        raise SystemExit(f"unknown command {command}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
