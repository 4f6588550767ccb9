"""The PostgreSQL schema, as ordered migration steps recorded in ``taskgui_schema``.

Everything lives in one schema of its own (``taskgui`` unless the DSN's owner says
otherwise), so a database shared with other programs keeps their tables apart and a
test can make a fresh schema per case. Columns mirror the SQLite file's (times as
integer microseconds, definitions as the codec's versioned JSON text), so one codec
and one JSON shape serve both stores.

PostgreSQL runs DDL inside transactions: all pending steps run in one, under an
advisory lock, so two nodes starting at once migrate once and an interrupted upgrade
leaves the old version. Steps are only ever appended.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from psycopg import Connection, sql

from taskgui.store.errors import ForeignDatabaseError, NewerSchemaError

DEFAULT_SCHEMA = "taskgui"
# An arbitrary key of taskgui's for pg_advisory_xact_lock: serialises migrations.
_MIGRATION_LOCK = 0x54475549

MIGRATIONS: Sequence[str] = (
    # 1: tasks, their runs, quarantine, requests; ids from a counter row (a sequence
    # would use ids up in a failed batch); a statement-level trigger NOTIFYs every
    # change on the channel "taskgui_<schema>", so nobody polls.
    """
    CREATE TABLE tasks (
        id              BIGINT PRIMARY KEY,
        name            TEXT    NOT NULL,
        command         TEXT    NOT NULL,  -- versioned JSON (store/codec.py)
        priority        BIGINT  NOT NULL,
        first_run_at    BIGINT  NOT NULL,  -- microseconds since the epoch, UTC
        recurrence      TEXT    NOT NULL,
        retry           TEXT    NOT NULL,
        timeout         DOUBLE PRECISION,
        concurrency_key TEXT,
        overlap         TEXT    NOT NULL,
        misfire         TEXT    NOT NULL,
        misfire_grace   DOUBLE PRECISION NOT NULL,
        paused          INTEGER NOT NULL,
        state           TEXT    NOT NULL,
        attempt         BIGINT  NOT NULL,
        next_run_at     BIGINT,
        slot_kind       TEXT,
        scheduled_at    BIGINT,
        slot_attempt    BIGINT  NOT NULL,
        deferred_at     BIGINT,
        last_outcome    TEXT,
        last_run_at     BIGINT,
        created_at      BIGINT  NOT NULL,
        updated_at      BIGINT  NOT NULL,
        waiting         TEXT
    );
    CREATE INDEX tasks_running ON tasks (id) WHERE state = 'running';
    CREATE TABLE counters (name TEXT PRIMARY KEY, value BIGINT NOT NULL);
    INSERT INTO counters VALUES ('task_id', 0);
    CREATE TABLE runs (
        id           BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        task_id      BIGINT NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
        attempt      BIGINT NOT NULL,
        kind         TEXT   NOT NULL,
        scheduled_at BIGINT NOT NULL,
        started_at   BIGINT,
        finished_at  BIGINT,
        outcome      TEXT,              -- NULL while the run is in progress
        exit_code    BIGINT,
        error        TEXT,
        output       TEXT   NOT NULL DEFAULT '',
        pid          BIGINT,
        missed       BIGINT
    );
    CREATE INDEX runs_by_task ON runs (task_id, id);
    CREATE INDEX runs_open ON runs (id) WHERE outcome IS NULL;
    CREATE TABLE quarantine (
        task_id BIGINT PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
        error   TEXT   NOT NULL,
        at      BIGINT NOT NULL
    );
    CREATE TABLE requests (
        id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        op         TEXT   NOT NULL,
        task_id    BIGINT,
        payload    TEXT,
        created_at BIGINT NOT NULL,
        done_at    BIGINT,
        error      TEXT
    );
    CREATE INDEX requests_open ON requests (id) WHERE done_at IS NULL;
    CREATE FUNCTION notify_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        PERFORM pg_notify('taskgui_' || TG_TABLE_SCHEMA, TG_TABLE_NAME);
        RETURN NULL;
    END $$;
    CREATE TRIGGER tasks_changed AFTER INSERT OR UPDATE OR DELETE ON tasks
        FOR EACH STATEMENT EXECUTE FUNCTION notify_change();
    CREATE TRIGGER runs_changed AFTER INSERT OR UPDATE OR DELETE ON runs
        FOR EACH STATEMENT EXECUTE FUNCTION notify_change();
    CREATE TRIGGER requests_changed AFTER INSERT ON requests
        FOR EACH STATEMENT EXECUTE FUNCTION notify_change();
    """,
    # 2: several nodes, one schedule. ``nodes`` is the registry (heartbeats on the
    # database's clock); ``leadership`` the one lease row, whose epoch is the fencing
    # token every dispatch carries; a run names the node that runs it and the epoch
    # that dispatched it, and one occurrence's attempt can be dispatched once only:
    # a second insert fails at commit, whatever the timing (runs_once).
    """
    CREATE TABLE nodes (
        name            TEXT PRIMARY KEY,
        host            TEXT NOT NULL,
        pid             BIGINT NOT NULL,
        version         TEXT NOT NULL,
        started_at      TIMESTAMPTZ NOT NULL,
        last_heartbeat  TIMESTAMPTZ NOT NULL,
        clock_offset_ms DOUBLE PRECISION NOT NULL DEFAULT 0,
        workers         INTEGER NOT NULL DEFAULT 0,
        stopped_at      TIMESTAMPTZ
    );
    CREATE TABLE leadership (
        id         INTEGER PRIMARY KEY CHECK (id = 1),
        node       TEXT,
        epoch      BIGINT NOT NULL,
        since      TIMESTAMPTZ,
        expires_at TIMESTAMPTZ NOT NULL
    );
    INSERT INTO leadership VALUES (1, NULL, 0, NULL, '-infinity');
    ALTER TABLE runs ADD COLUMN node TEXT, ADD COLUMN epoch BIGINT,
        ADD COLUMN priority BIGINT NOT NULL DEFAULT 0, ADD COLUMN concurrency_key TEXT;
    CREATE UNIQUE INDEX runs_once ON runs (task_id, kind, scheduled_at, attempt)
        WHERE missed IS NULL;
    CREATE INDEX runs_unclaimed ON runs (priority DESC, id)
        WHERE outcome IS NULL AND node IS NULL;
    """,
    # 3: when to tell a person about a task's runs (core.notify_rules), as SQLite's
    # schema 9 has it; NULL follows the default in the settings.
    """
    ALTER TABLE tasks ADD COLUMN notify TEXT;
    """,
    # 4: when a run may start beyond its time (spread, run conditions), as the SQLite
    # file keeps it (schema 10): versioned JSON, NULL for a task with neither.
    """
    ALTER TABLE tasks ADD COLUMN rules TEXT;
    """,
    # 5: tasks that run after others (core/dependencies.py): which upstreams have
    # completed since the task's last trigger (fan-in marks), a JSON list of ids,
    # committed with the upstream's result, as the SQLite file keeps it (schema 11).
    """
    ALTER TABLE tasks ADD COLUMN after_marks TEXT;
    """,
    # 6: where a run may go. A node's tags (``daemon --node-tag``); a run dispatched
    # for a task pinned to a node or a tag (its rules' on_node / on_tag) carries the
    # pin, so a claim can skip what is not its own without reading the task.
    """
    ALTER TABLE nodes ADD COLUMN tags TEXT[] NOT NULL DEFAULT '{}';
    ALTER TABLE runs ADD COLUMN on_node TEXT, ADD COLUMN on_tag TEXT;
    """,
    # 7: run conditions on a shared schedule (store.postgres.placement). A run carries
    # the conditions the claiming node's machine must meet; a run stopped because one
    # ended (outcome 'stopped') leaves the run key, so the same attempt can be
    # dispatched again when they hold, as a file's schedule runs it again.
    """
    ALTER TABLE runs ADD COLUMN needs TEXT[], ADD COLUMN needs_idle_s DOUBLE PRECISION;
    DROP INDEX runs_once;
    CREATE UNIQUE INDEX runs_once ON runs (task_id, kind, scheduled_at, attempt)
        WHERE missed IS NULL AND outcome IS DISTINCT FROM 'stopped';
    """,
    # 8: the leader's outbox (store.postgres.news). What an engine decided about runs'
    # ends (the events its log and notifications tell) is written in the same fenced
    # commit as the decision, named after the process that will tell it, and deleted
    # once told; a row whose teller stopped answering is the leader's to tell.
    """
    CREATE TABLE news (
        id         BIGINT GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        epoch      BIGINT NOT NULL,  -- the lease under which the decision was committed
        teller     TEXT   NOT NULL,  -- the node (or CLI) that tells it, and its process
        teller_pid BIGINT NOT NULL,
        body       TEXT   NOT NULL   -- versioned JSON: the events and the runs' results
    );
    """,
    # 9: what each node's machine offers now (store.postgres.waiting): the conditions it
    # meets by name (NULL: it reads nothing) and how long its user has been idle, so
    # the leader can tell a run no machine can take from one waiting for a worker
    # (and give it up in time), and a window can say why a dispatched run waits. A
    # change of them is news to every node and window, as a change of a run is.
    """
    ALTER TABLE nodes ADD COLUMN offers TEXT[], ADD COLUMN offers_idle_s DOUBLE PRECISION;
    CREATE TRIGGER nodes_offers_changed AFTER UPDATE OF offers, offers_idle_s ON nodes
        FOR EACH STATEMENT EXECUTE FUNCTION notify_change();
    """,
    # 10: news only when what a node offers did change. A statement trigger fires for
    # an UPDATE that matched no row too, so every node's publish woke every node and
    # window, and made the leader read its waiting runs again, for the same reading.
    """
    DROP TRIGGER nodes_offers_changed ON nodes;
    CREATE TRIGGER nodes_offers_changed AFTER UPDATE OF offers, offers_idle_s ON nodes
        FOR EACH ROW WHEN (OLD.offers IS DISTINCT FROM NEW.offers
                           OR OLD.offers_idle_s IS DISTINCT FROM NEW.offers_idle_s)
        EXECUTE FUNCTION notify_change();
    """,
)

# A dispatch's ON CONFLICT names the run key's index by its columns and predicate.
RUN_KEY = (
    "(task_id, kind, scheduled_at, attempt) "
    "WHERE missed IS NULL AND outcome IS DISTINCT FROM 'stopped'"
)

SCHEMA_VERSION = len(MIGRATIONS)


def channel(schema: str) -> str:
    """The NOTIFY channel of a schema's changes."""
    return f"taskgui_{schema}"


def migrate(connection: Connection[Any], schema: str, target: int = SCHEMA_VERSION) -> int:
    """Bring ``schema`` up to ``target`` in one transaction; return the version it had.

    Refuses a schema that holds tables but no ``taskgui_schema`` (another program's),
    and one written by a newer taskgui, before writing anything.
    """
    name = sql.Identifier(schema)
    with connection.transaction():
        connection.execute("SELECT pg_advisory_xact_lock(%s)", (_MIGRATION_LOCK,))
        start = _version(connection, schema)
        if start > SCHEMA_VERSION:
            raise NewerSchemaError(
                f"the schema {schema} was written by a newer taskgui (schema {start}, this "
                f"one knows up to {SCHEMA_VERSION}); upgrade taskgui"
            )
        if start == target:
            connection.execute(sql.SQL("SET search_path TO {}").format(name))
            return start
        connection.execute(sql.SQL("CREATE SCHEMA IF NOT EXISTS {}").format(name))
        connection.execute(sql.SQL("SET LOCAL search_path TO {}").format(name))
        if start == 0:
            connection.execute("CREATE TABLE taskgui_schema (version INTEGER NOT NULL)")
            connection.execute("INSERT INTO taskgui_schema VALUES (0)")
        for version in range(start + 1, target + 1):
            connection.execute(MIGRATIONS[version - 1])
        connection.execute("UPDATE taskgui_schema SET version = %s", (target,))
    connection.execute(sql.SQL("SET search_path TO {}").format(name))
    return start


def _version(connection: Connection[Any], schema: str) -> int:
    tables = connection.execute(
        "SELECT count(*), count(*) FILTER (WHERE table_name = 'taskgui_schema') "
        "FROM information_schema.tables WHERE table_schema = %s",
        (schema,),
    ).fetchone()
    assert tables is not None
    if tables[1]:
        row = connection.execute(
            sql.SQL("SELECT version FROM {}.taskgui_schema").format(sql.Identifier(schema))
        ).fetchone()
        return int(row[0]) if row else 0
    if tables[0]:
        raise ForeignDatabaseError(
            f"the schema {schema} holds {tables[0]} table(s) that are not taskgui's; taskgui "
            "left it untouched. Name another schema (?options=-csearch_path=...) or database"
        )
    return 0
