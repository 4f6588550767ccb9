"""Taking over a shared schedule's engine: what a new leader builds, from the store.

Unlike a single process's start (``control.recovery``), nothing is interrupted here:
runs other nodes run (or will claim) go on and stay the engine's (``Engine.load``'s
``carried_on``); a node's own leftovers were closed when it joined, a silent node's
are rescued by the leader. Used by a node taking the lead and by the CLI, which leads
for a moment to make a change when no node runs the schedule.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime

from taskgui.core.engine.engine import Engine
from taskgui.core.events import Event, RunFinished
from taskgui.core.status import RunId, RunResult
from taskgui.store.postgres.placement import EVERYTHING_HOLDS
from taskgui.store.postgres.repository import PostgresRepository
from taskgui.store.postgres.shared_runs import SharedRuns


@dataclass(frozen=True, slots=True)
class TakeOver:
    """The load's events (to commit, fenced) and, for the runs found ended that no
    engine had decided yet (their ``RunFinished``), what the node that ran them
    recorded: told from the outbox like any end."""

    events: list[Event]
    results: Mapping[RunId, RunResult] = field(default_factory=dict)


def take_over(
    repository: PostgresRepository, runs: SharedRuns, engine: Engine, now: datetime
) -> TakeOver:
    """Load every task into ``engine``, carrying on the open runs. The repository then
    knows the carried runs' rows."""
    engine.conditions_changed(EVERYTHING_HOLDS, now)  # the claiming machine judges them
    loaded = repository.load_for_start(now)
    carried = runs.carried_on()
    events = engine.load(loaded.tasks, now, loaded.deferred, carried_on=carried)
    repository.forget_run_rows()
    repository.carry_run_rows({run: ref for ref, run in engine.carried_ids.items()})
    # A task whose carried runs all ended: the latest one's end is decided now.
    ended = {
        task_id: task_runs[-1].ref
        for task_id, task_runs in carried.items()
        if task_runs and all(run.outcome is not None for run in task_runs)
    }
    recorded = {row: result for row, _, _, result in runs.ended(list(ended.values()))}
    results = {
        event.run.run_id: recorded[ended[event.run.task_id]]
        for event in events
        if isinstance(event, RunFinished)
        and event.run.task_id in ended
        and ended[event.run.task_id] in recorded
    }
    return TakeOver(events, results)


def highest_task_id(repository: PostgresRepository, engine: Engine) -> int:
    """The highest task id the store held at the take-over (quarantined too)."""
    known = [snapshot.spec.id for snapshot in engine.snapshots(load_deferred=False)]
    known += [quarantined.task_id for quarantined in repository.quarantined()]
    return max(known, default=0)
