"""Export and import against real repositories: round trips, history, atomicity.

The promise to a person: export, then import into an empty database, and the
definitions are the same; an import adds all of its tasks or none; replacing never
loses a definition, even when the second step fails.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from taskgui.control.operations import Operations
from taskgui.control.recovery import recover
from taskgui.control.transfer import PartialImportError, export_document, replace_planned
from taskgui.core.engine.engine import Engine
from taskgui.core.states import RunOutcome
from taskgui.core.status import RunResult
from taskgui.core.task import TaskSpec
from taskgui.core.transfer.export_file import (
    command_json,
    dump_document,
    parse_document,
    recurrence_json,
    retry_json,
)
from taskgui.core.transfer.plan import ImportPlan, plan_import
from taskgui.store import codec
from taskgui.store.errors import StoreError
from taskgui.store.protocols import TaskRepository
from taskgui.store.sqlite.repository import SqliteRepository
from tests.helpers.factories import T0, at, make_spec
from tests.helpers.store import (
    REPOSITORY_KINDS,
    Driver,
    make_repository,
    raw_connection,
    rich_specs,
)


@pytest.fixture(params=REPOSITORY_KINDS)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def repositories(tmp_path: Path, kind: str) -> Iterator[tuple[TaskRepository, TaskRepository]]:
    source = make_repository(kind, tmp_path / "source.sqlite3")
    target = make_repository(kind, tmp_path / "target.sqlite3")
    yield source, target
    source.close()
    target.close()


def definitions(repository: TaskRepository) -> list[TaskSpec]:
    return [snapshot.spec.with_id(0) for snapshot in repository.list_tasks()]


def import_into(repository: TaskRepository, text: str) -> ImportPlan:
    """What the CLI does without --replace: parse all, plan, one add_tasks call."""
    plan = plan_import(parse_document(text), repository.list_tasks(), T0)
    repository.add_tasks(plan.to_add, T0)
    return plan


def without_ids(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [{k: v for k, v in task.items() if k != "id"} for task in document["tasks"]]


def test_export_then_import_into_an_empty_database_gives_the_same_definitions(
    repositories: tuple[TaskRepository, TaskRepository],
) -> None:
    source, target = repositories
    Driver(source).add(*rich_specs().values(), make_spec(0, name="plain"))
    Driver(source).add(make_spec(0, name="plain"))  # names need not be unique
    exported = export_document(source, T0)

    plan = import_into(target, dump_document(exported))

    assert definitions(target) == definitions(source)
    assert len(plan.report.added) == len(definitions(source)) and not plan.report.skipped
    # And the file the target writes is the same, but for the ids and the time.
    again = export_document(target, T0 + timedelta(hours=1))
    assert without_ids(again) == without_ids(exported)


def test_values_have_the_same_shape_as_the_store_writes(kind: str) -> None:
    for spec in rich_specs().values():
        assert command_json(spec.command) == json.loads(codec.encode_command(spec.command))
        assert recurrence_json(spec.recurrence) == json.loads(
            codec.encode_recurrence(spec.recurrence)
        )
        assert retry_json(spec.retry) == json.loads(codec.encode_retry(spec.retry))


def test_with_history_every_run_is_exported_newest_first(
    repositories: tuple[TaskRepository, TaskRepository],
) -> None:
    source, _ = repositories
    driver = Driver(source)
    busy, idle = driver.add(
        make_spec(0, name="busy"), make_spec(0, name="idle", first_run_at=at(9e5))
    )
    driver.run_once(
        busy.id, at(1), RunOutcome.FAILED, RunResult(exit_code=3, error="exit 3", output="oops\n")
    )
    driver.run_once(busy.id, at(2))

    plain = export_document(source, T0)
    full = export_document(source, T0, with_history=True)

    assert "runs" not in plain
    assert full["tasks"] == plain["tasks"]
    assert full["runs"][str(idle.id)] == []
    first, second = reversed(full["runs"][str(busy.id)])
    assert (first["outcome"], first["exit_code"], first["error"], first["output"]) == (
        "failed",
        3,
        "exit 3",
        "oops\n",
    )
    assert first["started_at"] == "2026-01-01T12:00:01+00:00"
    assert second["outcome"] == "succeeded"
    assert first["id"] < second["id"]


def test_an_import_adds_all_of_its_tasks_in_one_transaction_or_none(tmp_path: Path) -> None:
    source = SqliteRepository(tmp_path / "source.sqlite3")
    Driver(source).add(*[make_spec(0, name=f"task {i}") for i in range(5)])
    text = dump_document(export_document(source, T0))
    path = tmp_path / "target.sqlite3"
    target = SqliteRepository(path)
    with raw_connection(path) as connection:  # the fourth insert fails inside SQLite
        connection.execute(
            "CREATE TRIGGER poison BEFORE INSERT ON tasks WHEN NEW.name = 'task 3' "
            "BEGIN SELECT RAISE(ABORT, 'refused'); END"
        )

    with pytest.raises(StoreError, match="refused"):
        import_into(target, text)

    assert target.list_tasks() == []
    source.close()
    target.close()


def test_one_invalid_task_means_nothing_is_read(tmp_path: Path) -> None:
    source = SqliteRepository(tmp_path / "source.sqlite3")
    Driver(source).add(*[make_spec(0, name=f"task {i}") for i in range(3)])
    data = export_document(source, T0)
    data["tasks"][2]["retry"]["max_attempts"] = 0
    target = SqliteRepository(tmp_path / "target.sqlite3")

    with pytest.raises(ValueError, match=r"task 3 \('task 2'\): field 'retry.max_attempts'"):
        import_into(target, dump_document(data))

    assert target.list_tasks() == []
    source.close()
    target.close()


@pytest.fixture
def loaded(tmp_path: Path) -> Iterator[tuple[SqliteRepository, Operations, list[TaskSpec]]]:
    """A database with two tasks and some history, its schedule loaded (as under the lock)."""
    repository = SqliteRepository(tmp_path / "db.sqlite3")
    driver = Driver(repository)
    stored = driver.add(
        make_spec(0, name="backup"), make_spec(0, name="keep", first_run_at=at(900_000))
    )
    driver.run_once(stored[0].id, at(1))
    engine = Engine()
    recover(repository, engine, at(2))
    yield repository, Operations(engine, repository), stored
    repository.close()


def replacing_backup(repository: SqliteRepository) -> ImportPlan:
    new = make_spec(0, name="backup", command=replace(make_spec().command, line="new-backup"))
    text = dump_document(
        {
            "format": "taskgui-export",
            "version": 1,
            "tasks": [
                {
                    "name": new.name,
                    "command": command_json(new.command),
                    "first_run_at": "2026-01-01T12:00:00+00:00",
                }
            ],
        }
    )
    return plan_import(parse_document(text), repository.list_tasks(), at(2), replace_existing=True)


def test_replace_deletes_the_old_task_and_its_history_and_adds_the_new(
    loaded: tuple[SqliteRepository, Operations, list[TaskSpec]],
) -> None:
    repository, ops, (old, keep) = loaded
    plan = replacing_backup(repository)
    assert plan.delete_ids == (old.id,)

    [new] = replace_planned(ops, plan, at(2))

    names = {snapshot.id: snapshot.spec.name for snapshot in repository.list_tasks()}
    assert names == {keep.id: "keep", new.id: "backup"}
    assert repository.get(new.id).spec.command.line == "new-backup"
    assert repository.runs(old.id) == []
    assert old.id not in ops.engine and new.id in ops.engine


def test_when_the_delete_fails_both_tasks_stay_and_the_error_names_the_old_id(
    loaded: tuple[SqliteRepository, Operations, list[TaskSpec]],
) -> None:
    repository, ops, (old, _) = loaded
    plan = replacing_backup(repository)
    with raw_connection(repository.path) as connection:
        connection.execute(
            "CREATE TRIGGER keep_all BEFORE DELETE ON tasks "
            "BEGIN SELECT RAISE(ABORT, 'deletes refused'); END"
        )

    with pytest.raises(PartialImportError) as caught:
        replace_planned(ops, plan, at(2))

    assert caught.value.not_deleted == [old.id]
    assert f"(ids: {old.id})" in str(caught.value) and "deletes refused" in str(caught.value)
    [added] = caught.value.added
    backups = [s.id for s in repository.list_tasks() if s.spec.name == "backup"]
    assert backups == [old.id, added.id]  # nothing lost
