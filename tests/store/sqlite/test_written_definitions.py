"""A task's definition is written whole only when it changed: its runs write its status.

Counted on a real file by a trigger on the definition's ``command`` column, which
SQLite fires for every UPDATE that sets it, changed value or not: the repository's own
statements are what is counted, not a guess at them.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from taskgui.core.states import RunOutcome
from taskgui.store.sqlite.repository import SqliteRepository
from tests.helpers.factories import T0, at, make_spec
from tests.helpers.store import Driver, raw_connection

COUNTING = """
CREATE TABLE definition_writes (task_id INTEGER);
CREATE TRIGGER count_definition_writes AFTER UPDATE OF command ON tasks
BEGIN INSERT INTO definition_writes VALUES (new.id); END;
CREATE TABLE status_writes (task_id INTEGER);
CREATE TRIGGER count_status_writes AFTER UPDATE OF state ON tasks
BEGIN INSERT INTO status_writes VALUES (new.id); END;
"""


def writes(db: Path, table: str) -> int:
    with raw_connection(db) as connection:
        [(count,)] = connection.execute(f"SELECT count(*) FROM {table}")
    return int(count)


@pytest.fixture
def driver(tmp_path: Path) -> Driver:
    db = tmp_path / "tasks.sqlite3"
    repository = SqliteRepository(db)
    with raw_connection(db) as connection:
        connection.executescript(COUNTING)
    return Driver(repository)


@pytest.mark.parametrize("count", [1, 3])  # one add (SQLite picks the id) and a bulk add
def test_a_new_tasks_first_runs_write_its_status_not_its_definition(
    driver: Driver, count: int
) -> None:
    assert isinstance(driver.repository, SqliteRepository)
    db = driver.repository.path
    added = driver.add(*(make_spec(0, name=f"t{index}") for index in range(count)))

    for ticket in driver.due(T0, workers=count):
        driver.start(ticket, at(1))
        driver.finish(ticket, RunOutcome.SUCCEEDED, at(2))

    assert writes(db, "status_writes") >= count  # the runs were written
    assert writes(db, "definition_writes") == 0
    # The trigger does count a definition written whole: an edit is one.
    driver.apply(driver.engine.update(replace(added[0], name="renamed"), at(3)), at(3))
    assert writes(db, "definition_writes") == 1
    driver.repository.close()
