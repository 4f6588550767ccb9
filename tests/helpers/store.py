"""Building blocks for the store tests: repositories of either kind, a driver that runs
the real engine against a repository the way the scheduler will, raw SQLite access, and
a look at this process's open file descriptors."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path

from taskgui.core.engine.engine import Engine
from taskgui.core.events import Event, RunDispatched
from taskgui.core.notify_rules import parse_rule
from taskgui.core.recurrence import Cron, Every, EveryMode
from taskgui.core.retry import Backoff, RetryPolicy
from taskgui.core.states import MisfirePolicy, OverlapPolicy, RunOutcome
from taskgui.core.status import RunId, RunResult, RunTicket, TaskSnapshot, TaskStatus
from taskgui.core.task import Command, TaskId, TaskSpec
from taskgui.store.memory import MemoryRepository
from taskgui.store.protocols import DEFAULT_HISTORY_LIMIT, TaskRepository
from taskgui.store.sqlite.repository import SqliteRepository
from taskgui.store.sqlite.wal_checkpoints import WalCheckpointer
from tests.helpers.factories import T0, make_spec

REPOSITORY_KINDS = ("memory", "sqlite")
ROOT = Path(__file__).resolve().parents[2]


def make_repository(
    kind: str, path: Path, *, history_limit: int = DEFAULT_HISTORY_LIMIT
) -> TaskRepository:
    """A repository of ``kind`` ("memory" or "sqlite"; the SQLite one lives at ``path``)."""
    if kind == "memory":
        return MemoryRepository(history_limit=history_limit)
    if kind == "sqlite":
        return SqliteRepository(path, history_limit=history_limit)
    raise ValueError(f"unknown repository kind {kind!r}")


@contextmanager
def raw_connection(path: Path) -> Iterator[sqlite3.Connection]:
    """A plain sqlite3 connection in autocommit mode, always closed."""
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        yield connection
    finally:
        connection.close()


def open_descriptors(prefix: Path) -> list[str]:
    """The files under ``prefix`` (a path or path prefix) this process has open."""
    found: list[str] = []
    for name in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{name}")
        except OSError:
            continue
        if target.startswith(str(prefix)):
            found.append(target)
    return sorted(found)


def persistent(status: TaskStatus) -> TaskStatus:
    """``status`` without the live-only fields (what a restarted process can know)."""
    return status._replace(running=0, running_since=None, waiting=None)


def stored(snapshot: TaskSnapshot) -> TaskSnapshot:
    """``snapshot`` as a repository can give it back: without the live-only fields."""
    return TaskSnapshot(snapshot.spec, persistent(snapshot.status))


def rich_specs() -> dict[str, TaskSpec]:
    """Definitions that between them set every TaskSpec field away from its default."""
    base = make_spec(0, first_run_at=T0 + timedelta(microseconds=123_457))
    return {
        "every-fixed-rate": replace(
            base,
            recurrence=Every(timedelta(minutes=5, microseconds=250)),
            priority=-17,
            misfire=MisfirePolicy.SKIP,
        ),
        "every-fixed-delay": replace(
            base,
            recurrence=Every(timedelta(hours=2), EveryMode.FIXED_DELAY),
            overlap=OverlapPolicy.QUEUE,
            misfire=MisfirePolicy.RUN_ALL,
            misfire_grace=timedelta(seconds=2.5),
        ),
        "cron-with-zone": replace(
            base,
            name="nightly backup",
            recurrence=Cron("30 2 * * 1-5", "Europe/Berlin"),
            overlap=OverlapPolicy.PARALLEL,
            misfire_grace=timedelta(0),
        ),
        "exponential-jitter-retry": replace(
            base,
            retry=RetryPolicy(
                backoff=Backoff.EXPONENTIAL,
                max_attempts=7,
                base_delay=timedelta(seconds=1.5),
                max_delay=timedelta(minutes=30),
                factor=3.25,
                jitter=True,
            ),
            timeout=timedelta(seconds=90, microseconds=500_000),
        ),
        "fixed-retry": replace(
            base,
            retry=RetryPolicy(
                backoff=Backoff.FIXED,
                max_attempts=2,
                base_delay=timedelta(seconds=10),
                max_delay=timedelta(seconds=10),
            ),
            notify=parse_rule("after:3"),
        ),
        "command-details": replace(
            base,
            name="ünïcødé ✓ name",
            command=Command(
                line='printf "%s\\n" "$GREETING" | tee -a \'log file.txt\'',
                use_shell=False,
                cwd="/srv/jobs dir",
                env=(("GREETING", "hello = world"), ("EMPTY", ""), ("PATH", "/usr/bin:/bin")),
            ),
            concurrency_key="backups",
            priority=1_000_000,
        ),
        "paused": replace(
            base, paused=True, timeout=timedelta(minutes=1), notify=parse_rule("never")
        ),
    }


class Driver:
    """The real engine and a repository, wired the way the scheduler does it.

    Every engine call's events are applied to the repository (commit before acting)
    before the driver returns them.
    """

    def __init__(self, repository: TaskRepository, engine: Engine | None = None) -> None:
        self.repository = repository
        self.engine = engine if engine is not None else Engine()  # an empty one is falsy

    def apply(
        self,
        events: Sequence[Event],
        now: datetime,
        results: Mapping[RunId, RunResult] | None = None,
    ) -> list[Event]:
        self.repository.apply(events, now, results)
        return list(events)

    def add(self, *specs: TaskSpec, now: datetime = T0) -> list[TaskSpec]:
        added = self.repository.add_tasks(specs, now)
        for spec in added:
            self.apply(self.engine.add(spec), now)
        return added

    def add_one(self, spec: TaskSpec | None = None, now: datetime = T0) -> TaskId:
        [added] = self.add(spec or make_spec(0), now=now)
        return added.id

    def due(self, now: datetime, workers: int = 1) -> list[RunTicket]:
        events = self.apply(self.engine.due(now, workers), now)
        return [event.run for event in events if isinstance(event, RunDispatched)]

    def due_events(self, now: datetime, workers: int = 1) -> list[Event]:
        return self.apply(self.engine.due(now, workers), now)

    def start(self, ticket: RunTicket, now: datetime) -> list[Event]:
        return self.apply(self.engine.started(ticket.run_id, now), now)

    def finish(
        self,
        ticket: RunTicket,
        outcome: RunOutcome,
        now: datetime,
        result: RunResult | None = None,
    ) -> list[Event]:
        events = self.engine.finished(ticket.run_id, outcome, now)
        results = None if result is None else {ticket.run_id: result}
        return self.apply(events, now, results)

    def run_once(
        self,
        task_id: TaskId,
        now: datetime,
        outcome: RunOutcome = RunOutcome.SUCCEEDED,
        result: RunResult | None = None,
    ) -> RunTicket:
        """Make the task due now (run now), dispatch it and finish it."""
        self.apply(self.engine.run_now(task_id, now), now)
        [ticket] = self.due(now)
        assert ticket.task_id == task_id
        self.finish(ticket, outcome, now, result)
        return ticket

    def remove(self, task_id: TaskId, now: datetime) -> list[Event]:
        return self.apply(self.engine.remove(task_id), now)

    def cancel(self, task_id: TaskId, now: datetime) -> list[Event]:
        return self.apply(self.engine.cancel(task_id), now)

    def snapshot(self, task_id: TaskId) -> TaskSnapshot:
        """The engine's view of the task, as a repository can store it."""
        return stored(self.engine.snapshot(task_id))


def checkpoint(db: Path) -> None:
    """Fold the WAL into the file now, as the service's checkpoint thread does."""
    checkpointer = WalCheckpointer(db)
    try:
        in_wal, copied = checkpointer.checkpoint()
        assert in_wal == copied, "a reader held the WAL; the checkpoint did not catch up"
    finally:
        checkpointer.close()
