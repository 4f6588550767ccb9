"""Fixtures of the PostgreSQL store tests (see tests/helpers/postgres.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from taskgui.store.postgres.repository import PostgresRepository
from tests.helpers.postgres import (
    PostgresServer,
    pytest_runtest_makereport,  # noqa: F401 - the hook
    session_server,
)


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    yield from session_server()


@pytest.fixture
def schema(postgres: PostgresServer) -> str:
    return postgres.new_schema()


@pytest.fixture
def repositories(postgres: PostgresServer, schema: str) -> Iterator[list[PostgresRepository]]:
    """Three repositories on one fresh schema: three nodes' sessions."""
    opened = [PostgresRepository(postgres.dsn, schema=schema) for _ in range(3)]
    yield opened
    for repository in opened:
        repository.close()
