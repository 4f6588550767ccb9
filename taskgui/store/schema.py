"""The schema, as ordered migration steps keyed by ``PRAGMA user_version``.

Step N takes a database at version N-1 to version N inside one transaction, so an
interrupted upgrade leaves the file at the old version, never half-way. Steps are only
ever appended: a released step never changes, because files in the wild ran it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

from taskgui.store.errors import NewerSchemaError

MIGRATIONS: Sequence[str] = (
    # 1: task definitions with their scheduling state, and run history.
    """
    CREATE TABLE tasks (
        id              INTEGER PRIMARY KEY AUTOINCREMENT,
        name            TEXT    NOT NULL,
        command         TEXT    NOT NULL,  -- versioned JSON
        priority        INTEGER NOT NULL,
        first_run_at    INTEGER NOT NULL,  -- microseconds since the epoch, UTC
        recurrence      TEXT    NOT NULL,  -- versioned JSON
        retry           TEXT    NOT NULL,  -- versioned JSON
        timeout         REAL,              -- seconds
        concurrency_key TEXT,
        overlap         TEXT    NOT NULL,
        misfire         TEXT    NOT NULL,
        misfire_grace   REAL    NOT NULL,
        paused          INTEGER NOT NULL,
        state           TEXT    NOT NULL,
        attempt         INTEGER NOT NULL,
        next_run_at     INTEGER,
        slot_kind       TEXT,
        scheduled_at    INTEGER,
        slot_attempt    INTEGER NOT NULL,
        deferred_at     INTEGER,
        last_outcome    TEXT,
        last_run_at     INTEGER,
        created_at      INTEGER NOT NULL,
        updated_at      INTEGER NOT NULL
    );
    CREATE INDEX tasks_by_state ON tasks (state);
    CREATE TABLE runs (
        id           INTEGER PRIMARY KEY AUTOINCREMENT,
        task_id      INTEGER NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
        attempt      INTEGER NOT NULL,
        kind         TEXT    NOT NULL,
        scheduled_at INTEGER NOT NULL,
        started_at   INTEGER,
        finished_at  INTEGER,
        outcome      TEXT,              -- NULL while the run is in progress
        exit_code    INTEGER,
        error        TEXT,
        output       TEXT NOT NULL DEFAULT ''
    );
    CREATE INDEX runs_by_task ON runs (task_id, id);
    """,
    # 2: rows that could not be decoded are set aside and reported, never deleted;
    # and finding the runs a crash left open must not scan the whole history.
    """
    CREATE TABLE quarantine (
        task_id INTEGER PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
        error   TEXT    NOT NULL,
        at      INTEGER NOT NULL
    );
    CREATE INDEX runs_open ON runs (id) WHERE outcome IS NULL;
    """,
    # 3: requests from other processes (the CLI, a second window) to the one process
    # that runs the schedule; it performs them in order and records the answer.
    """
    CREATE TABLE requests (
        id         INTEGER PRIMARY KEY AUTOINCREMENT,
        op         TEXT    NOT NULL,
        task_id    INTEGER,
        payload    TEXT,              -- JSON, for ops that carry a definition
        created_at INTEGER NOT NULL,
        done_at    INTEGER,
        error      TEXT               -- NULL when it succeeded
    );
    CREATE INDEX requests_open ON requests (id) WHERE done_at IS NULL;
    """,
    # 4: the process id of each run, so that after a crash the next scheduler can stop
    # commands the dead one left running before it retries them.
    """
    ALTER TABLE runs ADD COLUMN pid INTEGER;
    """,
    # 5: an index over every task's state cost each insert and each state change a
    # b-tree write, to speed up only "list --state" (a scan of 100,000 rows takes
    # milliseconds). A start needs just the running tasks: index only those.
    """
    DROP INDEX tasks_by_state;
    CREATE INDEX tasks_running ON tasks (id) WHERE state = 'running';
    """,
    # 6: why a due task has not started (a WaitReason: worker, concurrency_key, ...),
    # written by the process running the schedule with each change of the task, so the
    # CLI and a window following that process can say what the task waits for. It
    # describes that process's moment only: every start clears it.
    """
    ALTER TABLE tasks ADD COLUMN waiting TEXT;
    """,
)

SCHEMA_VERSION = len(MIGRATIONS)


def schema_version(connection: sqlite3.Connection) -> int:
    row = connection.execute("PRAGMA user_version").fetchone()
    return int(row[0])


def refuse_newer(version: int, path: Path) -> None:
    """Raise NewerSchemaError if ``version`` is from a newer taskgui than this one."""
    if version > SCHEMA_VERSION:
        raise NewerSchemaError(
            f"{path} was written by a newer taskgui (schema {version}, this one knows up "
            f"to {SCHEMA_VERSION}); upgrade taskgui, or point --db at another file",
            path,
        )


def migrate(connection: sqlite3.Connection, path: Path, target: int = SCHEMA_VERSION) -> int:
    """Bring the database up to ``target``; return the version it started at.

    The connection must be in autocommit mode (``isolation_level=None``); each step
    runs in its own BEGIN IMMEDIATE transaction together with its version bump.
    """
    start = schema_version(connection)
    refuse_newer(start, path)
    for version in range(start + 1, target + 1):
        connection.execute("BEGIN IMMEDIATE")
        try:
            for statement in _statements(MIGRATIONS[version - 1]):
                connection.execute(statement)
            connection.execute(f"PRAGMA user_version = {version}")
        except BaseException:
            # After some errors (a full disk) SQLite has rolled back already; a second
            # ROLLBACK would fail and hide the error that matters.
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise
        connection.execute("COMMIT")
    return start


def _statements(script: str) -> list[str]:
    """Split a migration into statements (executescript would commit implicitly)."""
    statements: list[str] = []
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        statements.append(buffer.strip())
    return statements
