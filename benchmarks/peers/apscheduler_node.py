"""One APScheduler 4 scheduler process of three sharing a PostgreSQL data store: the
peer of taskgui's lateness row in ``bench_postgres.py``.

Run with an interpreter that has APScheduler 4 (a pre-release), SQLAlchemy and
psycopg installed, never taskgui's own environment (APScheduler is no dependency of
taskgui): ``python -m venv /tmp/aps && /tmp/aps/bin/pip install --pre apscheduler
'sqlalchemy[asyncio]' sniffio 'psycopg[binary]'``, then ``bench_postgres.py --apscheduler-python
/tmp/aps/bin/python``.

Its data store is ``SQLAlchemyDataStore`` on PostgreSQL and its event broker
``PsycopgEventBroker`` (LISTEN/NOTIFY), the nearest set-up to taskgui's. The first
process adds ``COUNT`` one-off schedules (``DateTrigger``) ``SPACING_MS`` apart from
``START`` (epoch seconds); each job appends how late it started (its function's start
less its scheduled fire time, in µs) and which scheduler ran it.

Arguments: URL CONNINFO LOG IDENTITY ADD(0|1) COUNT START SPACING_MS
"""

from __future__ import annotations

import signal
import sys
import threading
from datetime import UTC, datetime, timedelta

from apscheduler import Scheduler, current_job
from apscheduler.datastores.sqlalchemy import SQLAlchemyDataStore
from apscheduler.eventbrokers.psycopg import PsycopgEventBroker
from apscheduler.triggers.date import DateTrigger

IDENTITY = sys.argv[4] if len(sys.argv) > 4 else "?"


def tick(log: str) -> None:
    now = datetime.now(UTC)
    job = current_job.get()
    late = (now - job.scheduled_fire_time).total_seconds() * 1e6
    with open(log, "a", encoding="utf-8") as file:
        file.write(f"{job.schedule_id} {late:.0f} {IDENTITY}\n")


def main(argv: list[str]) -> int:
    url, conninfo, log, identity, add, count, start, spacing_ms = argv
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    store = SQLAlchemyDataStore(url)
    broker = PsycopgEventBroker(conninfo)
    with Scheduler(store, broker, identity=identity) as scheduler:
        if add == "1":
            first = datetime.fromtimestamp(float(start), UTC)
            for index in range(int(count)):
                at = first + timedelta(milliseconds=index * int(spacing_ms))
                scheduler.add_schedule(tick, DateTrigger(at), id=f"s{index}", kwargs={"log": log})
        scheduler.start_in_background()
        print("ready", flush=True)
        stop.wait()
        scheduler.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
