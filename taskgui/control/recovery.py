"""Picking up after whatever happened last time a schedule ran.

The order matters. First, runs that a previous process left in progress (it crashed,
was killed, the machine lost power) are closed as ``interrupted``; then the tasks are
loaded into the engine, which sends each interrupted task to its retry policy; then
those decisions are committed. Past-due tasks meet their misfire policy at the
scheduler's first ``due``. A crash therefore loses at most the runs in flight, and those
are recorded and retried: at-least-once delivery.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from taskgui.core.engine.engine import Engine
from taskgui.core.events import Event
from taskgui.store.protocols import QuarantinedTask, RunRecord, TaskRepository
from taskgui.system.collector import collector_paused


@dataclass(frozen=True, slots=True)
class Recovery:
    """What opening the schedule found and did, for the log and the user."""

    interrupted: list[RunRecord]
    quarantined: list[QuarantinedTask]
    events: list[Event]
    task_count: int


def recover(repository: TaskRepository, engine: Engine, now: datetime) -> Recovery:
    """Close runs left open, load every task into ``engine``, commit its decisions."""
    interrupted = repository.interrupt_open_runs(now)
    # Loading allocates a few objects per task and frees almost none; the cyclic
    # collector would walk every one of them again and again while the heap grows
    # (a third of a 100,000-task cold start). Nothing here makes cycles to collect.
    with collector_paused():
        loaded = repository.load_for_start(now)
        events = engine.load(loaded.tasks, now, loaded.deferred)
    repository.apply(events, now)
    return Recovery(interrupted, loaded.quarantined, events, len(engine))
