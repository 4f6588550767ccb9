"""SqliteTaskSource: reading deferred tasks back from the file on first use."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from taskgui.core.engine.engine import Engine
from taskgui.core.errors import UnreadableTaskError
from taskgui.core.events import RunDispatched
from taskgui.core.states import TaskState
from taskgui.core.status import TaskSnapshot
from taskgui.store.sqlite.repository import SqliteRepository
from tests.helpers.factories import T0, at, make_spec
from tests.helpers.store import raw_connection


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "taskgui.sqlite3"


@pytest.fixture
def repository(db: Path) -> Iterator[SqliteRepository]:
    repository = SqliteRepository(db)
    yield repository
    repository.close()


def test_fetch_many_reads_across_batches_and_skips_rows_not_asked_for(
    repository: SqliteRepository,
) -> None:
    specs = repository.add_tasks([make_spec(0, first_run_at=at(i)) for i in range(1_200)], T0)
    everything = {task.id: task for task in repository.load(T0).tasks}
    source = repository.load_for_start(T0).deferred
    assert source is not None

    wanted = [spec.id for spec in specs if spec.id % 3 != 0]  # gaps inside every batch
    found, errors = source.source.fetch_many(wanted)

    assert errors == []
    assert [snapshot.id for snapshot in found] == wanted
    assert all(snapshot == everything[snapshot.id] for snapshot in found)


def test_a_task_gone_from_the_file_is_reported_not_invented(
    db: Path, repository: SqliteRepository
) -> None:
    [kept, gone] = repository.add_tasks([make_spec(0), make_spec(0)], T0)
    source = repository.load_for_start(T0).deferred
    assert source is not None
    with raw_connection(db) as other:
        other.execute("DELETE FROM tasks WHERE id = ?", (gone.id,))

    with pytest.raises(UnreadableTaskError, match="no longer in the database"):
        source.source.fetch(gone.id)
    found, [error] = source.source.fetch_many([kept.id, gone.id])
    assert [snapshot.id for snapshot in found] == [kept.id] and error.task_id == gone.id


@pytest.mark.parametrize("many", [False, True], ids=["fetch", "fetch_many"])
def test_a_row_that_cannot_be_decoded_is_quarantined_when_read(
    db: Path, repository: SqliteRepository, many: bool
) -> None:
    [good, bad] = repository.add_tasks([make_spec(0), make_spec(0)], T0)
    with raw_connection(db) as other:
        other.execute("UPDATE tasks SET command = '{\"v\": 1}' WHERE id = ?", (bad.id,))
    start = repository.load_for_start(T0)
    assert start.quarantined == [] and start.deferred is not None
    source = start.deferred.source

    if many:
        found, [error] = source.fetch_many([good.id, bad.id])
        assert [snapshot.id for snapshot in found] == [good.id]
    else:
        with pytest.raises(UnreadableTaskError) as raised:
            source.fetch(bad.id)
        error = raised.value
    assert error.task_id == bad.id
    assert error.reason == "the stored command: field 'line': this field is required"

    [quarantined] = repository.quarantined()
    assert quarantined.task_id == bad.id
    with raw_connection(db) as other:  # set aside, never deleted
        assert other.execute("SELECT count(*) FROM tasks").fetchone() == (2,)
    # The next start leaves it out from the beginning.
    start = repository.load_for_start(at(1))
    assert start.deferred is not None
    assert [task_id for task_id, _ in start.deferred.queued] == [good.id]


def test_only_running_tasks_are_read_whole_at_start(db: Path, repository: SqliteRepository) -> None:
    [waiting, running] = repository.add_tasks([make_spec(0), make_spec(0)], T0)
    with raw_connection(db) as other:
        other.execute("UPDATE tasks SET state = 'running' WHERE id = ?", (running.id,))

    start = repository.load_for_start(T0)

    assert [snapshot.id for snapshot in start.tasks] == [running.id]
    assert isinstance(start.tasks[0], TaskSnapshot)
    assert start.deferred is not None
    assert [task_id for task_id, _ in start.deferred.queued] == [waiting.id]


# Hand-edited rows whose raw columns say one thing and whose decoded task another: the
# start's guess comes from the raw columns; once loaded, the decoded task decides.
ODD_ROWS = {
    "run time stored as a real number": "next_run_at = next_run_at + 0.5",
    "paused stored as empty text": "paused = ''",
    "slot kind stored as empty text": "slot_kind = ''",
    "paused stored as text": "paused = '0'",
}


@pytest.mark.parametrize("edit", list(ODD_ROWS.values()), ids=list(ODD_ROWS))
def test_a_hand_edited_row_is_scheduled_as_a_full_load_would_once_loaded(
    db: Path, repository: SqliteRepository, edit: str
) -> None:
    [odd, plain] = repository.add_tasks(
        [make_spec(0, first_run_at=at(10)), make_spec(0, first_run_at=at(30))], T0
    )
    with raw_connection(db) as other:
        other.execute(f"UPDATE tasks SET {edit} WHERE id = ?", (odd.id,))
    full = Engine()
    full.load(repository.load(T0).tasks, T0)
    start = repository.load_for_start(T0)
    lazy = Engine()
    lazy.load(start.tasks, T0, start.deferred)

    assert lazy.hydrate() == []  # what the scheduler does right after its start
    assert lazy.next_deadline() == full.next_deadline()
    assert lazy.due(at(20), 10) == full.due(at(20), 10)
    assert lazy.due(at(40), 10) == full.due(at(40), 10)
    assert lazy.next_deadline() == full.next_deadline()
    assert lazy.snapshot(plain.id).state is TaskState.RUNNING  # the rest unaffected


def test_a_run_time_out_of_range_neither_stops_the_start_nor_the_others(
    db: Path, repository: SqliteRepository
) -> None:
    [broken, fine] = repository.add_tasks(
        [make_spec(0, first_run_at=at(10)), make_spec(0, first_run_at=at(30))], T0
    )
    with raw_connection(db) as other:
        other.execute("UPDATE tasks SET next_run_at = ? WHERE id = ?", (10**18, broken.id))
    start = repository.load_for_start(T0)
    engine = Engine()
    engine.load(start.tasks, T0, start.deferred)

    # Not as taskgui writes it: read whole at the start, and set aside then.
    assert [entry.task_id for entry in start.quarantined] == [broken.id]
    assert "out of range" in start.quarantined[0].error
    assert broken.id not in engine and engine.hydrate() == []
    assert engine.next_deadline() == at(30)
    assert [t.run.task_id for t in engine.due(at(30), 10) if isinstance(t, RunDispatched)] == [
        fine.id
    ]
