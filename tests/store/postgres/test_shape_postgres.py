"""The task's one JSON shape through the PostgreSQL store: the same text as SQLite's.

``tests/core/shape/test_every_path.py`` sends every shape through the SQLite store,
the export file, a request and the CLI's JSON; PostgreSQL keeps the same rows (both
go through ``store/codec.py``), so here each definition must come back unchanged and
each JSON column must hold the shape's own object, on a real server.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest

from taskgui.core.shape import values
from taskgui.store.postgres.repository import PostgresRepository
from tests.helpers.factories import T0
from tests.helpers.postgres import PostgresServer
from tests.helpers.shapes import EVERY_SHAPE


@pytest.fixture
def schema(postgres: PostgresServer) -> Iterator[str]:
    name = postgres.new_schema()
    yield name
    with postgres.connect() as admin:
        admin.execute(f'DROP SCHEMA IF EXISTS "{name}" CASCADE')


def test_every_shape_comes_back_unchanged_from_postgresql(
    postgres: PostgresServer, schema: str
) -> None:
    repository = PostgresRepository(postgres.dsn, schema=schema)
    try:
        stored = repository.add_tasks(EVERY_SHAPE, T0)
    finally:
        repository.close()

    again = PostgresRepository(postgres.dsn, schema=schema)  # a new connection reads it
    try:
        assert [snapshot.spec for snapshot in again.list_tasks()] == stored
        assert [again.get(spec.id).spec for spec in stored] == stored
    finally:
        again.close()
    with postgres.connect() as connection:
        rows = connection.execute(
            f'SELECT command, recurrence, retry FROM "{schema}".tasks ORDER BY id'
        ).fetchall()
    for spec, (command, schedule, retry) in zip(stored, rows, strict=True):
        assert json.loads(command) == values.command_json(spec.command)
        assert json.loads(schedule) == values.schedule_json(spec.recurrence)
        assert json.loads(retry) == values.retry_json(spec.retry)
