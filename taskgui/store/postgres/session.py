"""One PostgreSQL connection that comes back after the server drops it.

A node lives for weeks; its connection will be cut (a server restart, a failover, an
idle timeout, ``pg_terminate_backend``). A statement on a broken connection raises
PostgresConnectionLostError (its transaction, if any, did not commit: PostgreSQL
rolls back what a dead connection left open), and the next statement connects again
and brings the search path back. Nothing is retried behind the caller's back: whether a
write whose COMMIT was cut off landed is for the caller to find out.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from psycopg import Connection, Cursor, sql

from taskgui.store.postgres.connection import connect, raise_lost, translate_errors
from taskgui.store.postgres.schema import migrate

Params = tuple[Any, ...] | list[Any] | Mapping[str, Any]


class Session:
    """The repository's connection: migrated on first open, reopened when broken."""

    def __init__(
        self,
        dsn: str,
        schema: str,
        *,
        on_connect: Callable[[Connection[Any]], None] | None = None,
        application_name: str = "taskgui",
    ) -> None:
        self.dsn = dsn
        self.application_name = application_name
        self.schema = schema
        self._on_connect = on_connect
        self._connection: Connection[Any] | None = None
        self.reconnects = 0
        self.connection()  # fail now, with a clear message, if the server is not there

    def connection(self) -> Connection[Any]:
        connection = self._connection
        if connection is not None and not connection.broken and not connection.closed:
            return connection
        if connection is not None:
            self.reconnects += 1
            connection.close()
        connection = connect(self.dsn, application_name=self.application_name)
        try:
            with translate_errors(self.dsn):
                if self.reconnects == 0:
                    migrate(connection, self.schema)
                else:
                    connection.execute(
                        sql.SQL("SET search_path TO {}").format(sql.Identifier(self.schema))
                    )
                if self._on_connect is not None:
                    self._on_connect(connection)
        except BaseException:
            connection.close()
            raise
        self._connection = connection
        return connection

    @property
    def backend_pid(self) -> int | None:
        """The server process serving this session now (None before it connects)."""
        connection = self._connection
        return None if connection is None or connection.closed else connection.info.backend_pid

    def query(self, statement: str, params: Params = ()) -> list[tuple[Any, ...]]:
        with translate_errors(self.dsn):
            cursor = self.connection().execute(statement, params)
            return cursor.fetchall() if cursor.description is not None else []

    def execute(self, statement: str, params: Params = ()) -> Cursor[Any]:
        with translate_errors(self.dsn):
            return self.connection().execute(statement, params)

    @contextmanager
    def transaction(self) -> Iterator[Connection[Any]]:
        """BEGIN ... COMMIT, ROLLBACK if the body raises; errors as StoreErrors.

        A UnicodeEncodeError (a lone surrogate psycopg cannot send) passes through as
        it is, after the rollback, so the caller can refuse the definition by name.
        """
        connection = self.connection()
        try:
            with connection.transaction():
                yield connection
        except UnicodeEncodeError:
            raise
        except BaseException as error:
            if connection.broken:
                raise_lost(self.dsn, error)
            with translate_errors(self.dsn):
                raise

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
