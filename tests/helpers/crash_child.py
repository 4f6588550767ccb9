"""A minimal headless scheduler loop, run as a child process that tests kill with SIGKILL.

It is deliberately not the Qt runtime: it exercises exactly the store's promises
(commit before acting, recovery at open) with the engine and real subprocesses, so a
crash test of the store does not depend on the layers above it.

Usage: python -m tests.helpers.crash_child DB_PATH WORKERS
Exits 0 when no task is left pending, retrying or running.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from taskgui.control.recovery import recover
from taskgui.core.clock import SystemClock
from taskgui.core.engine.engine import Engine
from taskgui.core.events import RunDispatched
from taskgui.core.states import RunOutcome, TaskState
from taskgui.core.status import RunId, RunResult
from taskgui.store.sqlite.lock import SchedulerLock
from taskgui.store.sqlite.opening import open_sqlite

ACTIVE = {TaskState.PENDING, TaskState.RETRYING, TaskState.RUNNING}


def main(path: Path, workers: int) -> int:
    clock = SystemClock()
    lock = SchedulerLock(path)
    lock.acquire()
    repository, _ = open_sqlite(path, clock.now())
    engine = Engine()
    recover(repository, engine, clock.now())
    running: dict[RunId, subprocess.Popen[bytes]] = {}
    while True:
        now = clock.now()
        events = engine.due(now, workers - len(running))
        repository.apply(events, now)  # committed before any process starts
        for event in events:
            if isinstance(event, RunDispatched):
                spec = engine.snapshot(event.run.task_id).spec
                running[event.run.run_id] = subprocess.Popen(
                    spec.command.line, shell=True, stdout=subprocess.DEVNULL
                )
        for run_id, process in list(running.items()):
            code = process.poll()
            if code is None:
                continue
            del running[run_id]
            outcome = RunOutcome.SUCCEEDED if code == 0 else RunOutcome.FAILED
            now = clock.now()
            events = engine.finished(run_id, outcome, now)
            repository.apply(events, now, {run_id: RunResult(exit_code=code)})
        if not running and not any(s.state in ACTIVE for s in engine.snapshots()):
            repository.close()
            lock.release()
            return 0
        time.sleep(0.002)


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), int(sys.argv[2])))
