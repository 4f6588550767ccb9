"""Fixtures of the contract suite: every test runs once per backend in ``BACKENDS``."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from taskgui.store.protocols import DEFAULT_HISTORY_LIMIT, ScheduleStore, TaskRepository
from tests.helpers.postgres import (
    PostgresServer,
    pytest_runtest_makereport,  # noqa: F401 - the hook: one "no server" line
    session_server,
)
from tests.helpers.store import Driver
from tests.store.contract.backends import BACKENDS, Backend, RepositoryFactory


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    """The test server's session database, for the PostgreSQL backend."""
    yield from session_server()


@pytest.fixture(params=sorted(BACKENDS))
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Backend]:
    opened = BACKENDS[request.param](tmp_path, request)
    try:
        yield opened
    finally:
        opened.close()


@pytest.fixture
def new_repository(backend: Backend) -> RepositoryFactory:
    """Opens a new, empty store of the backend each call (closed with the backend)."""
    count = 0

    def factory(history_limit: int = DEFAULT_HISTORY_LIMIT) -> TaskRepository:
        nonlocal count
        count += 1
        return backend.open(f"store{count}", history_limit=history_limit)

    return factory


@pytest.fixture
def repository(new_repository: RepositoryFactory) -> TaskRepository:
    return new_repository()


@pytest.fixture
def store(backend: Backend) -> ScheduleStore:
    """The connection of the process that runs the schedule."""
    return backend.open("shared")


@pytest.fixture
def sender(backend: Backend, store: ScheduleStore) -> ScheduleStore:
    """A second connection to ``store``'s store: another process (the CLI, a window)."""
    return backend.open("shared")


@pytest.fixture
def driver(repository: TaskRepository) -> Driver:
    return Driver(repository)
