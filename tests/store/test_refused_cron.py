"""A task stored with a cron expression this taskgui refuses (an older one accepted it).

Issue 12: it is not dropped and does not stop a start; it is kept, paused, and shown
with the reason and the fix. Real SQLite files; the row is edited the way an old
version would have written it.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import pytest

from taskgui.control.recovery import recover
from taskgui.core.engine.engine import Engine
from taskgui.core.errors import InvalidStateError
from taskgui.core.events import RunDispatched
from taskgui.core.recurrence import Cron, RefusedCron, stored_cron
from taskgui.core.states import TaskState
from taskgui.core.status import initial_status
from taskgui.store import codec
from taskgui.store.sqlite.repository import SqliteRepository
from tests.helpers.factories import T0, make_spec
from tests.helpers.store import Driver, raw_connection

OLD_FORMS = {
    # expression (as croniter took it): what the refusal says
    "R * * * *": "'R' (a random or hashed minute",
    "5/15 * * * *": "write '5-59/15'",
    "0 22-2 * * *": "write two ranges: '22-23,0-2'",
    "@Daily": "write '@daily'",
    "0 0 * * * *": "cron has no seconds or year field",
}


@pytest.fixture
def repository(tmp_path: Path) -> Iterator[SqliteRepository]:
    opened = SqliteRepository(tmp_path / "taskgui.sqlite3")
    yield opened
    opened.close()


def _store_old_schedule(path: Path, task_id: int, expr: str) -> str:
    text = f'{{"v":1,"kind":"cron","expr":"{expr}","tz":"Europe/Berlin"}}'
    with raw_connection(path) as other:
        other.execute("UPDATE tasks SET recurrence = ? WHERE id = ?", (text, task_id))
    return text


@pytest.mark.parametrize(("expr", "reason"), OLD_FORMS.items(), ids=list(OLD_FORMS))
def test_a_refused_stored_schedule_loads_paused_with_its_reason(
    repository: SqliteRepository, tmp_path: Path, expr: str, reason: str
) -> None:
    driver = Driver(repository)
    keep = driver.add_one(make_spec(0, name="fine", recurrence=Cron("0 9 * * *")))
    old = driver.add_one(make_spec(0, name="old", recurrence=Cron("0 9 * * *")))
    stored = _store_old_schedule(tmp_path / "taskgui.sqlite3", old, expr)

    engine = Engine()
    recovery = recover(repository, engine, T0 + timedelta(minutes=1))
    engine.hydrate()

    assert recovery.quarantined == []  # kept, not set aside
    assert len(engine) == 2
    snapshot = engine.snapshot(old)
    assert snapshot.state is TaskState.PAUSED
    assert snapshot.spec.paused
    schedule = snapshot.spec.recurrence
    assert isinstance(schedule, RefusedCron)
    assert (schedule.expr, schedule.tz) == (expr, "Europe/Berlin")  # exactly as stored
    text = snapshot.spec.describe_schedule()
    assert text.startswith(f"not running: cron {expr!r} (Europe/Berlin) is refused: ")
    assert reason in text
    assert text.endswith("Edit the schedule, then resume the task")
    assert engine.snapshot(keep).state is TaskState.PENDING

    with pytest.raises(InvalidStateError, match=r"cannot resume: its schedule is refused \("):
        engine.resume(old)
    # Nothing it does runs it: a day later it is still paused and was never due.
    later = T0 + timedelta(days=1)
    dispatched = [e for e in engine.due(later, free_workers=5) if isinstance(e, RunDispatched)]
    assert [event.run.task_id for event in dispatched] == [keep]
    # The stored schedule is written back unchanged, for a later fix.
    assert codec.encode_recurrence(schedule).replace(" ", "") == stored.replace(" ", "")
    with raw_connection(tmp_path / "taskgui.sqlite3") as other:
        [(row,)] = other.execute("SELECT recurrence FROM tasks WHERE id = ?", (old,)).fetchall()
    assert row.replace(" ", "") == stored.replace(" ", "")


def test_fixing_the_schedule_lets_the_task_resume(
    repository: SqliteRepository, tmp_path: Path
) -> None:
    driver = Driver(repository)
    old = driver.add_one(make_spec(0, name="old", recurrence=Cron("0 9 * * *")))
    _store_old_schedule(tmp_path / "taskgui.sqlite3", old, "R 9 * * *")
    engine = Engine()
    recover(repository, engine, T0)

    fixed = replace(engine.snapshot(old).spec, recurrence=Cron("17 9 * * *", "Europe/Berlin"))
    engine.update(fixed, T0)
    assert engine.snapshot(old).state is TaskState.PAUSED  # paused until a person resumes it
    engine.resume(old)
    assert engine.snapshot(old).state is TaskState.PENDING


@pytest.mark.parametrize("stored_paused", [0, 1])
def test_both_codec_paths_decode_a_refused_schedule_to_a_paused_task(stored_paused: int) -> None:
    refused = stored_cron("R * * * *", "UTC")
    assert isinstance(refused, RefusedCron)
    spec = make_spec(3, recurrence=refused)
    assert spec.paused  # TaskSpec pauses a task whose schedule cannot run
    row = [spec.id, *codec.spec_values(spec), *codec.status_values(initial_status(spec))]
    row[codec.TASK_COLUMNS.index("paused")] = stored_paused  # as an old taskgui wrote it
    decoder = codec.RowDecoder()
    fast, slow = decoder._trusted_snapshot(tuple(row)), decoder._snapshot(tuple(row))
    assert fast is not None
    assert fast.spec == slow.spec == spec
