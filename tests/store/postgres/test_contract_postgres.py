"""The repository contract (tests/store/test_contract.py) against a real PostgreSQL.

Every contract test is imported and run here with the ``postgres`` kind; each
repository gets a fresh schema in the session's database. The differential test is
repeated against memory with fewer examples (each one opens a schema on the server).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

import tests.store.test_contract as contract
from taskgui.store.memory import MemoryRepository
from taskgui.store.postgres.repository import PostgresRepository
from taskgui.store.protocols import DEFAULT_HISTORY_LIMIT, TaskRepository
from tests.helpers.postgres import PostgresServer
from tests.store.test_contract import *  # noqa: F403 - the contract, collected here too

_NOT_HERE = {"test_both_repositories_store_the_same_thing"}  # memory vs SQLite; see below
for _name in [name for name in globals() if name.startswith("test_")]:
    if _name in _NOT_HERE or not hasattr(contract, _name):
        globals().pop(_name)


@pytest.fixture  # type: ignore[no-redef]
def kind() -> str:
    return "postgres"


@pytest.fixture  # type: ignore[no-redef]
def new_repository(
    postgres: PostgresServer, tmp_path: Path
) -> Iterator[contract.RepositoryFactory]:
    opened: list[TaskRepository] = []

    def factory(history_limit: int = DEFAULT_HISTORY_LIMIT) -> TaskRepository:
        repository = PostgresRepository(
            postgres.dsn, schema=postgres.new_schema(), history_limit=history_limit
        )
        opened.append(repository)
        return repository

    yield factory
    for repository in opened:
        repository.close()


@pytest.fixture(scope="module")
def shared_postgres(postgres: PostgresServer) -> PostgresServer:
    return postgres


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(operations=contract.OPERATIONS)
def test_memory_and_postgres_store_the_same_thing(
    shared_postgres: PostgresServer, operations: list[tuple[object, ...]]
) -> None:
    memory = MemoryRepository(history_limit=3)
    postgres = PostgresRepository(
        shared_postgres.dsn, schema=shared_postgres.new_schema(), history_limit=3
    )
    try:
        contract._run_differential(operations, memory, postgres)  # type: ignore[arg-type]
    finally:
        postgres.close()
