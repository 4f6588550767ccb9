"""A stand-in for the daemon: holds the scheduler lock and answers queued requests.

The CLI's request path must work against *any* process that runs the schedule, so it
is tested against this minimal loop (lock, recover, ``Operations.perform``), not
against the Qt runtime. It prints ``ready`` once it holds the lock, and gives up after
``LIFETIME_SECONDS`` so a test that dies cannot leave it running.

Usage: python -m tests.cli.request_server DB_PATH
"""

from __future__ import annotations

import sys
import time
from datetime import datetime
from pathlib import Path

from taskgui.control.operations import Operations
from taskgui.control.recovery import recover
from taskgui.core.clock import SystemClock
from taskgui.core.engine.engine import Engine
from taskgui.core.errors import TaskguiError
from taskgui.store.requests import Request, answer_request
from taskgui.store.sqlite.lock import SchedulerLock
from taskgui.store.sqlite.opening import open_sqlite

LIFETIME_SECONDS = 60.0
POLL_SECONDS = 0.01


def main(path: Path) -> int:
    clock = SystemClock()
    lock = SchedulerLock(path)
    lock.acquire()
    repository, _ = open_sqlite(path, clock.now())
    engine = Engine()
    recover(repository, engine, clock.now())
    operations = Operations(engine, repository)

    def perform(request: Request, now: datetime) -> str | None:
        try:
            operations.perform(request.op, request.task_id, request.payload, now)
        except TaskguiError as failure:
            return str(failure)
        return None

    print("ready", flush=True)
    deadline = clock.monotonic() + LIFETIME_SECONDS
    while clock.monotonic() < deadline:
        for row in repository.open_requests():
            now = clock.now()
            repository.complete_request(row.id, answer_request(row, now, perform), now)
        time.sleep(POLL_SECONDS)
    repository.close()
    lock.release()
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
