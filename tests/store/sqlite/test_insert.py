"""New tasks' rows: the INSERT computes the initial status; it must match the codec's row."""

from __future__ import annotations

from pathlib import Path

import pytest

from taskgui.core.recurrence import Cron
from taskgui.core.task import TaskSpec
from taskgui.store import codec
from taskgui.store.sqlite.insert import ROWS_PER_STATEMENT
from taskgui.store.sqlite.repository import SqliteRepository
from tests.helpers.factories import T0, at, make_spec
from tests.helpers.store import raw_connection, rich_specs

ROW_COLUMNS = ", ".join((*codec.TASK_COLUMNS, "created_at", "updated_at"))


def varied(count: int) -> list[TaskSpec]:
    """Paused and not, one-off, recurring and cron (whose first run is its first match)."""
    kinds = [
        *rich_specs().values(),
        make_spec(0, paused=True),
        make_spec(0, first_run_at=at(0.5), recurrence=Cron("*/5 * * * *", "UTC")),
    ]
    return [kinds[index % len(kinds)] for index in range(count)]


@pytest.mark.parametrize("count", [1, 2, ROWS_PER_STATEMENT, 2 * ROWS_PER_STATEMENT + 7])
def test_stored_rows_are_exactly_the_codecs_new_task_rows(tmp_path: Path, count: int) -> None:
    db = tmp_path / "taskgui.sqlite3"
    repository = SqliteRepository(db)
    repository.add_tasks([make_spec(0)], T0)  # ids continue after existing ones
    specs = varied(count)

    stored = repository.add_tasks(specs, at(1))
    repository.close()

    assert [spec.id for spec in stored] == list(range(2, count + 2))
    now_us = codec.to_us(at(1))
    with raw_connection(db) as connection:
        rows = connection.execute(f"SELECT {ROW_COLUMNS} FROM tasks WHERE id > 1 ORDER BY id")
        assert list(rows) == [codec.new_task_row(spec, now_us) for spec in stored]
