"""The schema, as ordered migration steps keyed by ``PRAGMA user_version``.

Step N takes a database at version N-1 to version N inside one transaction, so an
interrupted upgrade leaves the file at the old version, never half-way. Steps are only
ever appended: a released step never changes, because files in the wild ran it.

taskgui's files carry ``PRAGMA application_id = 0x54475549`` (the bytes "TGUI" at
offset 68 of the header, where ``file`` and a hex dump show them): any other SQLite
file is another program's, and ``check_ours`` refuses it before anything is written,
so a mistyped ``--db`` never gets taskgui's tables, WAL mode or a new file mode.
Files from before the mark (schema 1 to ``MARKED_FROM - 1``) are recognised by their
tables and marked by migration ``MARKED_FROM``.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from pathlib import Path

from taskgui.store.errors import ForeignDatabaseError, NewerSchemaError

APPLICATION_ID = 0x54475549  # "TGUI"

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
    # 6: mark the file as taskgui's, so that another program's database is told apart
    # (see the module docstring). Part of the transaction like user_version.
    f"""
    PRAGMA application_id = {APPLICATION_ID};
    """,
    # 7: how many occurrences a "missed" record stands for, as a number a script can
    # add up (it was only in the text, "skipped 6 occurrences (...)"). Older records
    # get it from that text: CAST takes the leading integer, "at least" is skipped.
    """
    ALTER TABLE runs ADD COLUMN missed INTEGER;
    UPDATE runs SET missed = CAST(substr(error, 9) AS INTEGER)
        WHERE outcome = 'missed' AND error LIKE 'skipped %'
        AND error NOT LIKE 'skipped at least %';
    UPDATE runs SET missed = CAST(substr(error, 18) AS INTEGER)
        WHERE outcome = 'missed' AND error LIKE 'skipped at least %';
    """,
    # 8: why a due task has not started (a WaitReason: worker, concurrency_key, ...),
    # written by the process running the schedule with each change of the task, so the
    # CLI and a window following that process can say what the task waits for. It
    # describes that process's moment only: every start clears it.
    """
    ALTER TABLE tasks ADD COLUMN waiting TEXT;
    """,
    # 9: when to tell a person about a task's runs (core.notify_rules: "on-failure",
    # "after:3", ...); NULL follows the default in the settings, as every task did.
    """
    ALTER TABLE tasks ADD COLUMN notify TEXT;
    """,
    # 10: when a run may start beyond its time: its spread and its run conditions, as
    # versioned JSON (core/shape/rules.py); NULL for a task with neither (most).
    """
    ALTER TABLE tasks ADD COLUMN rules TEXT;
    """,
    # 11: tasks that run after others (core/dependencies.py): which upstreams have
    # completed since the task's last trigger (fan-in marks), a JSON list of task ids,
    # written in the transaction that records the upstream's result; NULL for none.
    # The index finds the tasks with upstreams (loaded whole at a start) without a
    # scan: rules_text writes "after": only for those.
    """
    ALTER TABLE tasks ADD COLUMN after_marks TEXT;
    CREATE INDEX tasks_after ON tasks (id) WHERE instr(rules, '"after":') > 0;
    """,
)

SCHEMA_VERSION = len(MIGRATIONS)
# The migration that writes APPLICATION_ID: unmarked files below it may be taskgui's.
MARKED_FROM = 6
# What every taskgui file since schema 1 holds: how an unmarked one is recognised.
_TASKGUI_TABLES = {
    "tasks": {"name", "command", "recurrence", "retry", "misfire", "slot_attempt"},
    "runs": {"task_id", "attempt", "kind", "scheduled_at", "outcome", "output"},
}


def schema_version(connection: sqlite3.Connection) -> int:
    row = connection.execute("PRAGMA user_version").fetchone()
    return int(row[0])


def check_ours(connection: sqlite3.Connection, path: Path) -> int:
    """The schema version of a file taskgui may open; raise for anyone else's.

    Reads only: a file that is refused has not been written, switched to WAL or
    made private. An empty file (no tables, nothing marked) is a new database.
    """
    application_id = int(connection.execute("PRAGMA application_id").fetchone()[0])
    version = schema_version(connection)
    if application_id == APPLICATION_ID:
        refuse_newer(version, path)
        return version
    if application_id == 0:
        if version == 0 and not _objects(connection):
            return 0
        if 0 < version < MARKED_FROM and _looks_like_taskgui(connection):
            return version
    raise ForeignDatabaseError(_foreign_message(connection, path, application_id, version), path)


def _objects(connection: sqlite3.Connection) -> int:
    return int(connection.execute("SELECT count(*) FROM sqlite_master").fetchone()[0])


def _looks_like_taskgui(connection: sqlite3.Connection) -> bool:
    for table, columns in _TASKGUI_TABLES.items():
        found = {str(row[1]) for row in connection.execute(f"PRAGMA table_info({table})")}
        if not columns <= found:
            return False
    return True


def _foreign_message(
    connection: sqlite3.Connection, path: Path, application_id: int, version: int
) -> str:
    # Counts, not names: a name out of a stranger's file could hold terminal escapes.
    if application_id:
        marker = application_id & 0xFFFFFFFF  # the header holds it signed
        whose = f"it is marked as another program's (application_id 0x{marker:08x})"
    else:
        tables = connection.execute(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table'"
        ).fetchone()[0]
        whose = f"it holds {tables} table(s) that are not taskgui's (user_version {version})"
    return (
        f"{path} is another program's SQLite database, not taskgui's: {whose}; taskgui "
        "left it untouched. Point --db or TASKGUI_DB at a taskgui database or a new file"
    )


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
            # Read again under the write lock: another process (the CLI beside a
            # daemon starting on a new file) may have taken this step meanwhile, and
            # taking it twice fails ("table tasks already exists").
            if schema_version(connection) >= version:
                connection.execute("COMMIT")
                continue
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
