"""A real PostgreSQL server for the tests: one database per test session, a schema per
repository, both dropped afterwards.

The server is ``TASKGUI_TEST_POSTGRES`` (a DSN to an existing database with the right
to CREATE DATABASE), default the local trust-auth server at 127.0.0.1:5432. Without
a reachable server (or without psycopg) every PostgreSQL test skips with one reason,
which pytest's ``-ra`` summary prints as one line; ``TASKGUI_REQUIRE_POSTGRES=1``
(set by ``.ci/run``) turns that into a failure, so CI cannot go green by skipping.
"""

from __future__ import annotations

import itertools
import os
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import pytest

ADMIN_DSN_VAR = "TASKGUI_TEST_POSTGRES"
REQUIRE_VAR = "TASKGUI_REQUIRE_POSTGRES"
DEFAULT_ADMIN_DSN = "postgresql://postgres@127.0.0.1:5432/postgres"
_schemas = itertools.count(1)


@dataclass(frozen=True)
class PostgresServer:
    """The test session's own database on the server."""

    admin_dsn: str
    dsn: str
    database: str

    def new_schema(self) -> str:
        """A schema name no other repository in this session uses (created on open)."""
        return f"t{os.getpid()}_{next(_schemas)}"

    def connect(self) -> Any:
        import psycopg  # noqa: PLC0415 - optional dependency

        return psycopg.connect(self.dsn, autocommit=True)

    def query_in(self, schema: str, statement: str) -> list[tuple[Any, ...]]:
        """Run ``statement`` in ``schema`` on a connection of its own; its rows."""
        from psycopg import sql  # noqa: PLC0415 - optional dependency

        with self.connect() as connection:
            connection.execute(sql.SQL("SET search_path TO {}").format(sql.Identifier(schema)))
            cursor = connection.execute(statement)
            return cursor.fetchall() if cursor.description else []


_SKIP_REASON = "PostgreSQL tests need a server"


def _unavailable(reason: str) -> None:
    message = f"{_SKIP_REASON}: {reason}"
    if os.environ.get(REQUIRE_VAR) == "1":
        pytest.fail(f"{message} ({REQUIRE_VAR}=1)", pytrace=False)
    pytest.skip(message)


def session_server() -> Iterator[PostgresServer]:
    """Create the session's database, yield it, drop it (the body of a session fixture)."""
    try:
        import psycopg  # noqa: PLC0415
        from psycopg import sql  # noqa: PLC0415
    except ImportError:
        _unavailable("psycopg is not installed (pip install -e '.[dev,postgres]')")
        raise AssertionError("unreachable") from None
    admin_dsn = os.environ.get(ADMIN_DSN_VAR, DEFAULT_ADMIN_DSN)
    try:
        admin = psycopg.connect(admin_dsn, autocommit=True, connect_timeout=3)
    except psycopg.Error as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        _unavailable(f"none reachable at {admin_dsn} ({first}); set {ADMIN_DSN_VAR}")
        raise AssertionError("unreachable") from None
    database = f"taskgui_test_{uuid.uuid4().hex[:12]}"
    with admin:
        admin.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))
    dsn = urlunsplit(urlsplit(admin_dsn)._replace(path=f"/{database}"))
    try:
        yield PostgresServer(admin_dsn, dsn, database)
    finally:
        with psycopg.connect(admin_dsn, autocommit=True) as admin:
            admin.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(database))
            )


_SKIP_LINE = _unavailable.__code__.co_firstlineno  # where the reason is made


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """Every "no server" skip reported at one place, so ``-ra`` folds them into one line.

    pytest reports a skip raised in a fixture at each test's own line, which would print
    one line per PostgreSQL test. Import this hook into a conftest to use it.
    """
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    longrepr = report.longrepr
    if report.skipped and isinstance(longrepr, tuple) and _SKIP_REASON in str(longrepr[2]):
        report.longrepr = (__file__, _SKIP_LINE, longrepr[2])
