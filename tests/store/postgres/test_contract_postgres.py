"""The memory/PostgreSQL differential test.

The contract itself (repository, request queue, change feed) runs against PostgreSQL
as the ``postgres`` entry of tests/store/contract/backends.py, like every backend.
The differential test is repeated here against memory with fewer examples (each one
opens a schema on the server).
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings

from taskgui.store.memory import MemoryRepository
from taskgui.store.postgres.repository import PostgresRepository
from tests.helpers.postgres import PostgresServer
from tests.store.contract import test_repository as contract


@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
@given(operations=contract.OPERATIONS)
def test_memory_and_postgres_store_the_same_thing(
    postgres: PostgresServer, operations: list[tuple[object, ...]]
) -> None:
    memory = MemoryRepository(history_limit=3)
    store = PostgresRepository(postgres.dsn, schema=postgres.new_schema(), history_limit=3)
    try:
        contract._run_differential(operations, memory, store)  # type: ignore[arg-type]
    finally:
        store.close()
