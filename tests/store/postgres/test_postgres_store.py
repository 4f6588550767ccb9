"""What the PostgreSQL store does beyond the shared contract, on a real server:
migrations, the change feed, losing and regaining the connection, text PostgreSQL
cannot hold, and credentials kept out of messages."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta

import pytest
from psycopg import sql

from taskgui.core.errors import InvalidTaskError
from taskgui.core.states import RunOutcome
from taskgui.core.status import RunResult
from taskgui.store.errors import CodecError, ForeignDatabaseError, NewerSchemaError
from taskgui.store.postgres.connection import (
    PostgresConnectionLostError,
    PostgresUnavailableError,
    is_dsn,
    password_left_out,
    raise_lost,
    redact,
)
from taskgui.store.postgres.repository import PostgresRepository
from taskgui.store.postgres.schema import SCHEMA_VERSION
from tests.helpers.factories import T0, make_spec
from tests.helpers.postgres import PostgresServer
from tests.helpers.store import Driver


@pytest.fixture
def schema(postgres: PostgresServer) -> str:
    return postgres.new_schema()


@pytest.fixture
def repository(postgres: PostgresServer, schema: str) -> Iterator[PostgresRepository]:
    repository = PostgresRepository(postgres.dsn, schema=schema)
    yield repository
    repository.close()


def _terminate(postgres: PostgresServer, pid: int | None) -> None:
    assert pid is not None
    with postgres.connect() as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", (pid,))


# ------------------------------------------------------------------ schema


def test_a_new_schema_is_migrated_to_the_current_version(
    postgres: PostgresServer, repository: PostgresRepository, schema: str
) -> None:
    with postgres.connect() as connection:
        row = connection.execute(
            sql.SQL("SELECT version FROM {}.taskgui_schema").format(sql.Identifier(schema))
        ).fetchone()
    assert row == (SCHEMA_VERSION,)


def test_a_session_compiles_no_statement_and_keeps_the_dsns_options(
    postgres: PostgresServer, schema: str
) -> None:
    """A review: on a new schedule's tables (no statistics yet) the planner's guesses
    passed jit_above_cost and reading the nodes took 215-300 ms of JIT compiling,
    at every look of a window; without JIT it runs in under a millisecond."""
    repository = PostgresRepository(
        f"{postgres.dsn}{'&' if '?' in postgres.dsn else '?'}options=-c%20work_mem%3D8MB",
        schema=schema,
    )
    try:
        rows = repository.session.query(
            "SELECT current_setting('jit'), current_setting('work_mem')"
        )
        assert rows == [("off", "8MB")]  # off, and the DSN's own options still apply
        pid = repository.session.backend_pid
        _terminate(postgres, pid)
        with pytest.raises(PostgresUnavailableError):  # the break itself
            repository.session.query("SELECT 1")
        assert repository.session.query("SELECT current_setting('jit')") == [("off",)]  # again
    finally:
        repository.close()


def test_reopening_keeps_the_tasks_and_migrates_nothing(
    postgres: PostgresServer, repository: PostgresRepository, schema: str
) -> None:
    [spec] = repository.add_tasks([make_spec(0, name="kept")], T0)
    again = PostgresRepository(postgres.dsn, schema=schema)
    try:
        assert again.get(spec.id).spec == spec
    finally:
        again.close()


def test_nodes_starting_together_migrate_once(postgres: PostgresServer, schema: str) -> None:
    opened: list[PostgresRepository] = []
    errors: list[BaseException] = []

    def start() -> None:
        try:
            opened.append(PostgresRepository(postgres.dsn, schema=schema))
        except BaseException as error:
            errors.append(error)

    threads = [threading.Thread(target=start) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    try:
        assert errors == []
        assert len(opened) == 4
        opened[0].add_tasks([make_spec(0)], T0)
        assert [task.id for task in opened[3].list_tasks()] == [1]
    finally:
        for repository in opened:
            repository.close()


def test_a_schema_of_a_newer_taskgui_is_refused(postgres: PostgresServer, schema: str) -> None:
    PostgresRepository(postgres.dsn, schema=schema).close()
    with postgres.connect() as connection:
        connection.execute(
            sql.SQL("UPDATE {}.taskgui_schema SET version = 999").format(sql.Identifier(schema))
        )
    with pytest.raises(NewerSchemaError, match="newer taskgui"):
        PostgresRepository(postgres.dsn, schema=schema)


def test_another_programs_schema_is_refused_untouched(
    postgres: PostgresServer, schema: str
) -> None:
    name = sql.Identifier(schema)
    with postgres.connect() as connection:
        connection.execute(sql.SQL("CREATE SCHEMA {}").format(name))
        connection.execute(sql.SQL("CREATE TABLE {}.invoices (id int)").format(name))
    with pytest.raises(ForeignDatabaseError, match="not taskgui's"):
        PostgresRepository(postgres.dsn, schema=schema)
    with postgres.connect() as connection:
        tables = connection.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = %s",
            (schema,),
        ).fetchall()
    assert tables == [("invoices",)]


# ------------------------------------------------------------- change feed


def test_the_feed_reports_another_connections_commit_and_not_its_own(
    postgres: PostgresServer, repository: PostgresRepository, schema: str
) -> None:
    assert repository.changed() is False
    repository.add_tasks([make_spec(0)], T0)  # our own write
    assert repository.fileno() is not None
    assert repository.changed() is False
    other = PostgresRepository(postgres.dsn, schema=schema)
    try:
        other.add_tasks([make_spec(0)], T0)
        assert _eventually(repository.changed)
        assert repository.changed() is False  # drained
    finally:
        other.close()


def test_the_feed_of_one_schema_does_not_hear_another(
    postgres: PostgresServer, repository: PostgresRepository
) -> None:
    assert repository.changed() is False
    stranger = PostgresRepository(postgres.dsn, schema=postgres.new_schema())
    try:
        stranger.add_tasks([make_spec(0)], T0)
        stranger.submit_request("cancel", 1, None, T0)
    finally:
        stranger.close()
    assert not _eventually(repository.changed, tries=5)


def test_a_terminated_feed_connection_reconnects_and_says_look_again(
    postgres: PostgresServer, repository: PostgresRepository, schema: str
) -> None:
    assert repository.changed() is False
    feed = repository._change_feed()
    assert feed._connection is not None
    _terminate(postgres, feed._connection.info.backend_pid)
    assert _eventually(repository.changed)
    assert feed.reconnects == 1
    other = PostgresRepository(postgres.dsn, schema=schema)
    try:
        other.add_tasks([make_spec(0)], T0)
        assert _eventually(repository.changed)  # listening again
    finally:
        other.close()


def _eventually(check: object, tries: int = 50) -> bool:
    """Ask ``check`` until it answers True, waiting on the server between tries."""
    assert callable(check)
    for _ in range(tries):
        if check():
            return True
        threading.Event().wait(0.02)
    return False


# -------------------------------------------------------------- connection


def test_a_terminated_connection_fails_one_call_and_the_next_reconnects(
    postgres: PostgresServer, repository: PostgresRepository
) -> None:
    [spec] = repository.add_tasks([make_spec(0)], T0)
    _terminate(postgres, repository.session.backend_pid)
    with pytest.raises(PostgresConnectionLostError, match="lost the connection"):
        repository.list_tasks()
    assert [task.id for task in repository.list_tasks()] == [spec.id]
    assert repository.session.reconnects == 1


def test_an_unreachable_server_is_a_clear_error_without_the_password() -> None:
    dsn = "postgresql://taskgui:s3cret@127.0.0.1:1/taskgui?connect_timeout=1"
    with pytest.raises(PostgresUnavailableError) as caught:
        PostgresRepository(dsn)
    message = str(caught.value)
    assert "cannot connect to postgresql://taskgui:***@127.0.0.1:1/taskgui" in message
    assert "s3cret" not in message


@pytest.mark.parametrize(
    ("dsn", "quoted"),
    [
        # libpq quotes what it could not parse, the password with it (a trial).
        ("postgresql://postgres:S3cretPW@[::1", 'in URI: "postgresql://postgres:S3cretPW@[::1"'),
        ("postgresql://postgres:S3cret%PW@127.0.0.1/nosuch", '"S3cret%PW"'),
        ("postgresql://u:S3cret%21PW@[::1", "S3cret!PW"),  # decoded, as the server got it
        ("postgresql://127.0.0.1/db?user=u&password=S3cretPW&x=[", "password=S3cretPW"),
    ],
)
def test_a_drivers_message_never_carries_the_password(dsn: str, quoted: str) -> None:
    class DriverError(Exception):
        pass

    with pytest.raises(PostgresConnectionLostError) as caught:
        raise_lost(dsn, DriverError(f"it said {quoted}\nand more"))
    message = str(caught.value)
    assert "S3cret" not in message and "***" in message
    with pytest.raises(PostgresUnavailableError) as unparsable:
        PostgresRepository(dsn)  # the real driver on the real text, where it fails to parse
    assert "S3cret" not in str(unparsable.value)


@pytest.mark.parametrize(
    ("dsn", "shown"),
    [
        ("postgresql://u:pw@host/db", "postgresql://u:***@host/db"),
        (
            "postgres://u@host/db?password=pw&sslmode=require",
            "postgres://u@host/db?password=***&sslmode=require",
        ),
        ("postgresql://host/db", "postgresql://host/db"),
    ],
)
def test_redact_hides_every_password(dsn: str, shown: str) -> None:
    assert redact(dsn) == shown


@pytest.mark.parametrize(
    ("dsn", "kept"),
    [
        ("postgresql://u:pw@host/db", "postgresql://u@host/db"),
        # A trial: the autostart entry wrote password=*** (libpq then sends "***").
        ("postgresql://host:5432/db?user=u&password=S3cret", "postgresql://host:5432/db?user=u"),
        (
            "postgresql://h/db?password=S3&user=u&sslmode=require",
            "postgresql://h/db?user=u&sslmode=require",
        ),
        ("postgres://u@h/db?PASSWORD=x", "postgres://u@h/db"),
        ("postgresql://host/db", "postgresql://host/db"),
    ],
)
def test_a_dsn_kept_on_disk_has_no_password_at_all(dsn: str, kept: str) -> None:
    assert password_left_out(dsn) == kept


def test_only_postgresql_urls_select_the_store() -> None:
    assert is_dsn("postgresql://localhost/taskgui") and is_dsn("postgres://h/d")
    assert not is_dsn("/home/me/taskgui.sqlite3") and not is_dsn("postgresql.sqlite3")


# ------------------------------------------------------------------- text


def test_output_with_nul_bytes_is_stored_with_a_replacement(
    repository: PostgresRepository,
) -> None:
    driver = Driver(repository)
    task_id = driver.add_one()
    [ticket] = driver.due(T0)
    driver.finish(
        ticket,
        RunOutcome.FAILED,
        T0 + timedelta(seconds=1),
        RunResult(exit_code=1, error="bad\x00error", output="a\x00b"),
    )
    [run] = repository.runs(task_id)
    assert (run.output, run.error) == ("a\ufffdb", "bad\ufffderror")


def test_markup_and_huge_names_round_trip_as_plain_text(repository: PostgresRepository) -> None:
    name = "<img src=x onerror=alert(1)> " + "ü" * 160
    [spec] = repository.add_tasks([make_spec(0, name=name)], T0)
    assert repository.get(spec.id).spec.name == name


def test_a_request_with_a_nul_payload_is_kept_readable(repository: PostgresRepository) -> None:
    request_id = repository.submit_request("add", None, "{\x00}", T0)
    [row] = repository.open_requests()
    assert (row.id, row.payload) == (request_id, "{\ufffd}")
    repository.complete_request(request_id, "refused\x00", T0)
    assert repository.request_outcome(request_id) == (True, "refused\ufffd")


def test_a_name_with_a_lone_surrogate_is_refused_and_nothing_is_added(
    repository: PostgresRepository,
) -> None:
    with pytest.raises(InvalidTaskError, match="cannot be saved"):
        repository.add_tasks([make_spec(0, name="bad \udcff name")], T0)
    assert repository.list_tasks() == []


def test_an_unreadable_row_asked_for_says_where_it_stays_and_how_to_repair_it(
    postgres: PostgresServer, schema: str, repository: PostgresRepository
) -> None:
    [good, bad] = repository.add_tasks([make_spec(0), make_spec(0)], T0)
    with postgres.connect() as admin:
        admin.execute(
            sql.SQL("UPDATE {}.tasks SET command = 'not json' WHERE id = %s").format(
                sql.Identifier(schema)
            ),
            (bad.id,),
        )
    with pytest.raises(CodecError) as caught:
        repository.get(bad.id)
    message = str(caught.value)
    assert message.startswith(f"task {bad.id}: ") and "not valid JSON" in message
    assert f"left out of the schedule: repair its row in the schema {schema}" in message
    assert [task.id for task in repository.list_tasks()] == [good.id]
