"""The backends the contract suite runs against: one factory each.

A backend is opened per test by its factory (given the test's ``tmp_path``) and gives
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

from taskgui.store.memory import MemoryDatabase, MemoryRepository
from taskgui.store.protocols import DEFAULT_HISTORY_LIMIT, ScheduleStore, TaskRepository
from taskgui.store.sqlite.repository import SqliteRepository


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
    def __init__(self, tmp_path: Path) -> None:
        self._databases: dict[str, MemoryDatabase] = {}

    def open(
        self, name: str = "main", *, history_limit: int = DEFAULT_HISTORY_LIMIT
    ) -> ScheduleStore:
        database = self._databases.setdefault(name, MemoryDatabase())
        return MemoryRepository(history_limit=history_limit, database=database)

    def close(self) -> None:
        self._databases.clear()


class SqliteBackend:
    def __init__(self, tmp_path: Path) -> None:
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


BackendFactory = Callable[[Path], Backend]
# What the repository tests open fresh, empty stores with: history_limit= is its argument.
RepositoryFactory = Callable[..., TaskRepository]

# name -> factory; the contract suite runs once per entry.
BACKENDS: dict[str, BackendFactory] = {
    "memory": MemoryBackend,
    "sqlite": SqliteBackend,
}
