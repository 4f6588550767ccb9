"""The history on disk balances: every occurrence that passed ran or is recorded missed.

The same schedules as ``tests/core/engine/test_engine_accounting.py``, but every decision is
committed to a real SQLite file and every downtime is a real restart: the repository
is closed with runs in flight, reopened after the downtime, and ``recover`` rebuilds
the engine from what is on disk (runs left open become interrupted and are retried).
The check reads the history back from the file: the occurrence runs plus the counts
of the "missed" records are exactly the occurrences due.
"""

from __future__ import annotations

import random
import tempfile
from collections.abc import Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings

from taskgui.control.recovery import recover
from taskgui.core.engine.engine import Engine
from taskgui.core.events import Event
from taskgui.core.recurrence import Every
from taskgui.core.states import MisfirePolicy, OverlapPolicy, RunOutcome, SlotKind
from taskgui.core.task import TaskSpec
from taskgui.store.sqlite.repository import SqliteRepository
from tests.helpers.factories import at, make_spec
from tests.helpers.schedule_sim import ServiceLoop, covered, occurrences_until
from tests.helpers.schedule_strategies import Load, actions, loads, perform, schedules
from tests.helpers.store import Driver

RUN_ALL_LIMIT = 6
HISTORY = 100_000  # keep everything: this test reads back the whole history


class OnDisk:
    """A schedule on one SQLite file that can die and start again."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.repository = SqliteRepository(path, history_limit=HISTORY)

    def persist(self, events: Sequence[Event], now: datetime) -> None:
        self.repository.apply(events, now)

    def restart(self, now: datetime) -> tuple[Engine, list[Event]]:
        self.repository.close()  # the process died; its runs were left open
        self.repository = SqliteRepository(self.path, history_limit=HISTORY)
        engine = Engine(run_all_limit=RUN_ALL_LIMIT)
        return engine, recover(self.repository, engine, now).events


def assert_history_balances(
    repository: SqliteRepository, specs: list[TaskSpec], now: datetime
) -> None:
    for spec in specs:
        history = repository.runs(spec.id, limit=HISTORY)
        ran = [
            run.scheduled_at
            for run in history
            if run.kind is SlotKind.OCCURRENCE and run.outcome is not RunOutcome.MISSED
        ]
        missed = [run for run in history if run.outcome is RunOutcome.MISSED]
        accounted = sorted(
            ran
            + [
                at
                for run in missed
                for at in covered(spec.recurrence, run.scheduled_at, run.missed)
            ]
        )
        due = occurrences_until(spec, now)
        assert accounted == due, (
            f"task {spec.id} ({spec.misfire}, {spec.overlap}, {spec.recurrence}): "
            f"{len(due)} due, {len(ran)} runs and {sum(r.missed for r in missed)} missed on disk"
        )


def run_on_disk(specs: list[TaskSpec], steps: list[tuple[str, float]], **loop: Any) -> None:
    with tempfile.TemporaryDirectory() as folder:
        disk = OnDisk(Path(folder) / "taskgui.sqlite3")
        try:
            driver = Driver(disk.repository)
            stored = driver.add(*specs)
            sim = ServiceLoop(driver.engine, persist=disk.persist, restart=disk.restart, **loop)
            sim.settle()
            for step in steps:
                perform(sim, stored, step)
            sim.drain()
            assert_history_balances(disk.repository, stored, sim.now)
        finally:
            disk.repository.close()


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(specs=schedules(), steps=actions, load=loads)
def test_the_history_on_disk_accounts_for_every_occurrence_across_restarts(
    specs: list[TaskSpec], steps: list[tuple[str, float]], load: Load
) -> None:
    run_on_disk(specs, steps, **load.loop_options())


def test_61_minutes_down_with_run_all_then_a_restart_mid_catch_up() -> None:
    # Every 10 minutes, run_all, overlap skip (the defaults a person picks with
    # --misfire run_all); down 61 minutes, then down again in the middle of the
    # catch-up with a run in flight: the file still accounts for every occurrence.
    spec = make_spec(
        0,
        recurrence=Every(timedelta(minutes=10)),
        misfire=MisfirePolicy.RUN_ALL,
        overlap=OverlapPolicy.SKIP,
        first_run_at=at(600),
    )
    steps = [("pass", 1.0), ("down", 61 * 60.0 + 540), ("pass", 59.0), ("down", 120.0)]
    run_on_disk([spec], steps, rng=random.Random(3), workers=2, durations=(30.0,))
