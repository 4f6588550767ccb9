"""The change feed over LISTEN/NOTIFY, on a connection of its own.

Every write to the schema's tables NOTIFYs ``taskgui_<schema>`` (a statement-level
trigger, see ``schema``). ``changed`` drains what arrived without blocking and says
whether any of it came from another backend than the repository's own. A feed whose
connection broke connects again and answers True: what happened while it was away
cannot be known, so the follower looks again (never a missed change, at worst one
needless reload).

Each notice names the table written (the trigger's payload): ``changed_tables`` hands
over which tables others wrote since it was last asked, ``EVERY_TABLE`` among them
after a reconnect, so the shared schedule's leader re-reads only what may have moved.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from typing import Any, Final

from psycopg import Connection, sql

from taskgui.store.errors import StoreError
from taskgui.store.postgres.connection import connect, psycopg_module
from taskgui.store.postgres.schema import channel

# In ``changed_tables`` after the feed was away: any table may have been written.
EVERY_TABLE: Final = "*"


class NotifyFeed:
    """ChangeFeed: ``changed`` never blocks; ``fileno`` becomes readable on a change."""

    def __init__(self, dsn: str, schema: str, *, own: Callable[[], int | None]) -> None:
        self._dsn = dsn
        self._schema = schema
        self._own = own
        self._connection: Connection[Any] | None = None
        self._tables: set[str] = set()  # written by others since changed_tables
        self.reconnects = 0
        self._listen()

    def _listen(self) -> Connection[Any]:
        connection = connect(self._dsn, application_name="taskgui feed")
        connection.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel(self._schema))))
        self._connection = connection
        return connection

    def changed(self) -> bool:
        psycopg = psycopg_module()
        connection = self._connection
        if connection is None or connection.closed or connection.broken:
            return self._reconnect()
        own = self._own()
        seen = False
        try:
            # timeout=0: only what already arrived; the generator ends at once after.
            for notice in connection.notifies(timeout=0):
                if notice.pid != own:
                    seen = True
                    self._tables.add(notice.payload)
        except psycopg.OperationalError:
            return self._reconnect()
        if connection.broken:
            return self._reconnect()
        return seen

    def changed_tables(self) -> frozenset[str]:
        """The tables others wrote (of the notices ``changed`` drained) since the last
        call; ``EVERY_TABLE`` among them when notices may have been lost."""
        tables, self._tables = frozenset(self._tables), set()
        return tables

    def _reconnect(self) -> bool:
        self._tables.add(EVERY_TABLE)
        if self._connection is not None:
            with suppress(Exception):
                self._connection.close()
            self._connection = None
        self.reconnects += 1
        try:
            self._listen()
        except StoreError:
            return True  # still away: say "look again"; the next call tries again
        return True

    def fileno(self) -> int | None:
        connection = self._connection
        if connection is None or connection.closed:
            return None
        return connection.fileno()

    def close(self) -> None:
        if self._connection is not None:
            self._connection.close()
