"""The backends the contract suite runs against: one factory each.

A backend is opened per test by its factory (given the test's ``tmp_path`` and the
pytest request, for a session resource such as a server) and gives
out connections by name: ``open("a")`` twice is two connections to one store, as two
processes opening one file (or one database) would be; another name is another,
empty store. Everything the suite knows of a backend is here, so adding one
(PostgreSQL) is one factory and one line in ``BACKENDS``; a factory that cannot run
here (no server) calls ``pytest.skip`` with the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

import pytest

from taskgui.store.memory import MemoryDatabase, MemoryRepository
from taskgui.store.protocols import DEFAULT_HISTORY_LIMIT, ScheduleStore, TaskRepository
from taskgui.store.sqlite.repository import SqliteRepository
from tests.helpers.postgres import PostgresServer


class Backend(Protocol):
    """Connections to the stores of one test, of one backend."""

    def open(
        self, name: str = "main", *, history_limit: int = DEFAULT_HISTORY_LIMIT
    ) -> ScheduleStore:
        """A new connection to the store called ``name`` (created empty on first use)."""
        ...

    def close(self) -> None:
        """Close every connection opened, and drop whatever the stores left behind."""
        ...


class MemoryBackend:
    def __init__(self, tmp_path: Path, request: pytest.FixtureRequest) -> None:
        self._databases: dict[str, MemoryDatabase] = {}

    def open(
        self, name: str = "main", *, history_limit: int = DEFAULT_HISTORY_LIMIT
    ) -> ScheduleStore:
        database = self._databases.setdefault(name, MemoryDatabase())
        return MemoryRepository(history_limit=history_limit, database=database)

    def close(self) -> None:
        self._databases.clear()


class SqliteBackend:
    def __init__(self, tmp_path: Path, request: pytest.FixtureRequest) -> None:
        self._folder = tmp_path
        self._opened: list[SqliteRepository] = []

    def open(
        self, name: str = "main", *, history_limit: int = DEFAULT_HISTORY_LIMIT
    ) -> ScheduleStore:
        repository = SqliteRepository(self._folder / f"{name}.sqlite3", history_limit=history_limit)
        self._opened.append(repository)
        return repository

    def close(self) -> None:
        for repository in self._opened:
            repository.close()
        self._opened.clear()


class PostgresBackend:
    """A schema per store name in the session's database on the test server
    (tests/helpers/postgres.py: skipped, with one reason, without a server)."""

    def __init__(self, tmp_path: Path, request: pytest.FixtureRequest) -> None:
        from taskgui.store.postgres.repository import PostgresRepository  # noqa: PLC0415

        self._server: PostgresServer = request.getfixturevalue("postgres")
        self._repository = PostgresRepository
        self._schemas: dict[str, str] = {}
        self._opened: list[ScheduleStore] = []

    def open(
        self, name: str = "main", *, history_limit: int = DEFAULT_HISTORY_LIMIT
    ) -> ScheduleStore:
        schema = self._schemas.setdefault(name, self._server.new_schema())
        store = self._repository(self._server.dsn, schema=schema, history_limit=history_limit)
        self._opened.append(store)
        return store

    def close(self) -> None:
        for store in self._opened:
            store.close()
        self._opened.clear()


BackendFactory = Callable[[Path, pytest.FixtureRequest], Backend]
# What the repository tests open fresh, empty stores with: history_limit= is its argument.
RepositoryFactory = Callable[..., TaskRepository]

# name -> factory; the contract suite runs once per entry.
BACKENDS: dict[str, BackendFactory] = {
    "memory": MemoryBackend,
    "sqlite": SqliteBackend,
    "postgres": PostgresBackend,
}
