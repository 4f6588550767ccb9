"""Fill a database with tasks in every state, for screenshots and a first look.

Usage: python scripts/seed_demo.py DB_PATH

Runs go through the real engine and store (with simulated results), so history,
retries and states are exactly what the scheduler itself would have written.
"""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path

from taskgui.control.operations import Operations
from taskgui.core.clock import SystemClock
from taskgui.core.engine.engine import Engine
from taskgui.core.events import RunDispatched
from taskgui.core.recurrence import Cron, Every, EveryMode
from taskgui.core.retry import Backoff, RetryPolicy
from taskgui.core.states import RunOutcome
from taskgui.core.status import RunResult
from taskgui.core.task import Command, TaskSpec
from taskgui.store.sqlite.repository import SqliteRepository


def main(path: Path) -> int:
    clock = SystemClock()
    now = clock.now()
    repository = SqliteRepository(path)
    engine = Engine()
    ops = Operations(engine, repository)
    retry = RetryPolicy(
        backoff=Backoff.EXPONENTIAL,
        max_attempts=5,
        base_delay=timedelta(minutes=2),
        max_delay=timedelta(hours=1),
    )

    def spec(name: str, line: str, **fields: object) -> TaskSpec:
        values: dict[str, object] = {
            "name": name,
            "command": Command(line=line),
            "first_run_at": now,
        }
        values.update(fields)
        return TaskSpec(**values)  # type: ignore[arg-type]

    done_earlier = now - timedelta(minutes=3)
    specs = [
        spec(
            "Nightly backup",
            "rsync -a ~/Documents /mnt/backup/",
            priority=10,
            recurrence=Cron("30 2 * * *", "Europe/Berlin"),
            first_run_at=now + timedelta(hours=5),
            concurrency_key="backup",
            retry=retry,
        ),
        spec(
            "Sync calendar",
            "vdirsyncer sync",
            recurrence=Every(timedelta(minutes=15)),
            first_run_at=now + timedelta(minutes=4, seconds=12),
            priority=5,
        ),
        spec("Rotate logs", "logrotate ~/.config/logrotate.conf", first_run_at=done_earlier),
        spec(
            "Upload report",
            "curl -fsS -T report.pdf https://example.invalid/upload",
            first_run_at=done_earlier,
            retry=retry,
            priority=8,
        ),
        spec(
            "Fetch mail",
            "mbsync -a",
            first_run_at=done_earlier,
            retry=RetryPolicy(
                backoff=Backoff.FIXED,
                max_attempts=3,
                base_delay=timedelta(seconds=30),
                max_delay=timedelta(seconds=30),
            ),
        ),
        spec(
            "Weekly cleanup",
            "find ~/tmp -mtime +7 -delete",
            recurrence=Cron("0 9 * * 1", "UTC"),
            first_run_at=now + timedelta(days=2),
        ),
        spec("Render video", "ffmpeg -i in.mkv out.mp4", first_run_at=now + timedelta(hours=1)),
        spec("Long import", "sleep 600", first_run_at=now, priority=3),
        spec(
            "Check disk space",
            "df -h / | tail -1",
            recurrence=Every(timedelta(minutes=5), EveryMode.FIXED_DELAY),
            first_run_at=now + timedelta(seconds=50),
        ),
    ]
    stored, _ = ops.add(specs, done_earlier)
    by_name = {task.name: task.id for task in stored}

    # Simulate earlier runs three minutes ago.
    events = engine.due(done_earlier, 10)
    repository.apply(events, done_earlier)
    tickets = {e.run.task_id: e.run for e in events if isinstance(e, RunDispatched)}
    outcomes = {
        "Rotate logs": (RunOutcome.SUCCEEDED, RunResult(exit_code=0, output="rotating 4 logs\n")),
        "Upload report": (
            RunOutcome.FAILED,
            RunResult(
                exit_code=6,
                error="exit status 6",
                output="curl: (6) Could not resolve host: example.invalid\n",
            ),
        ),
        "Fetch mail": (
            RunOutcome.FAILED,
            RunResult(exit_code=1, error="exit status 1", output="Error: authentication failed\n"),
        ),
    }
    finish_at = done_earlier + timedelta(seconds=2)
    for name, (outcome, result) in outcomes.items():
        ticket = tickets[by_name[name]]
        events = engine.finished(ticket.run_id, outcome, finish_at)
        repository.apply(events, finish_at, {ticket.run_id: result})
    # Fetch mail fails through all of its attempts.
    moment = finish_at
    for _ in range(2):
        moment += timedelta(seconds=31)
        events = engine.due(moment, 10)
        repository.apply(events, moment)
        for event in events:
            if isinstance(event, RunDispatched) and event.run.task_id == by_name["Fetch mail"]:
                done = engine.finished(event.run.run_id, RunOutcome.FAILED, moment)
                repository.apply(
                    done,
                    moment,
                    {
                        event.run.run_id: RunResult(
                            exit_code=1,
                            error="exit status 1",
                            output="Error: authentication failed\n",
                        )
                    },
                )
    # Anything else that was dispatched in the simulation is put back as it was.
    for run in list(engine.running_runs.values()):
        if run.task_id == by_name["Long import"]:
            continue
        events = engine.finished(run.run_id, RunOutcome.SUCCEEDED, moment)
        repository.apply(events, moment)
    ops.pause(by_name["Render video"], now)
    ops.cancel(by_name["Weekly cleanup"], now)
    repository.close()
    print(f"seeded {len(stored)} tasks into {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
