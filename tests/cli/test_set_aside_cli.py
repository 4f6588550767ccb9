"""Tasks set aside as unreadable are visible from the CLI and can be deleted there
(outside trial: ``list`` said "no tasks" and nothing but an SQLite tool removed them)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from taskgui.core.events import TaskDropped
from taskgui.store.sqlite.repository import SqliteRepository
from tests.cli.test_cli import add
from tests.cli.test_cli import run as run  # noqa: PLC0414  (the fixture, by name)
from tests.helpers.cli import Run
from tests.helpers.factories import T0


@pytest.fixture
def damaged(run: Run, db: Path) -> int:
    """A task whose stored command is no longer readable, set aside by a start."""
    add(run, name="fine")
    task_id = add(run, name="damaged")
    with sqlite3.connect(db) as connection:
        connection.execute("UPDATE tasks SET command = '{\"v\": 1}' WHERE id = ?", (task_id,))
    repository = SqliteRepository(db)
    try:
        # What a scheduler does when it first needs the task and cannot read it.
        repository.apply([TaskDropped(task_id, "its stored command cannot be read")], T0)
    finally:
        repository.close()
    return task_id


def test_list_says_which_tasks_are_set_aside(run: Run, damaged: int) -> None:
    result = run("list")
    assert result.code == 0
    assert "fine" in result.out and "damaged" not in result.out
    assert f"1 task(s) set aside because they cannot be read (id {damaged})" in result.err
    assert "'taskgui delete ID' removes one" in result.err


def test_show_names_the_problem_and_the_way_out(run: Run, damaged: int) -> None:
    result = run("show", str(damaged))
    assert result.code == 1
    assert f"or delete it ('taskgui delete {damaged}')" in result.err


def test_delete_removes_a_set_aside_task(run: Run, damaged: int) -> None:
    result = run("delete", str(damaged))
    assert result.code == 0
    assert result.out == f"task {damaged} deleted (it was set aside: it could not be read)\n"
    listing = run("list")
    assert "set aside" not in listing.err
    assert run("show", str(damaged)).code == 1  # gone: "no task with id"
