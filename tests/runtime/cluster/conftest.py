"""Fixtures of the PostgreSQL store tests (see tests/helpers/postgres.py)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.helpers.postgres import (
    PostgresServer,
    pytest_runtest_makereport,  # noqa: F401 - the hook
    session_server,
)


@pytest.fixture(scope="session")
def postgres() -> Iterator[PostgresServer]:
    yield from session_server()
