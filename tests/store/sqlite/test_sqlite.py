"""The SQLite repository on real files: durability, privacy, migrations, damage, locks.

Everything here uses real files in tmp_path, real SQLite errors (a read-only URI, a
page limit for a full disk, a held write lock) and real child processes. Nothing is
mocked.
"""

from __future__ import annotations

import gc
import json
import logging
import os
import random
import shutil
import signal
import sqlite3
import stat
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import platformdirs
import pytest

from taskgui.control.recovery import recover
from taskgui.core.engine.engine import Engine
from taskgui.core.errors import TaskguiError
from taskgui.core.events import (
    RetryScheduled,
    TaskChanged,
    TaskDropped,
    TaskExhausted,
    TaskRemoved,
)
from taskgui.core.recurrence import Every
from taskgui.core.retry import RetryPolicy
from taskgui.core.states import RunOutcome, SlotKind, TaskState, WaitReason
from taskgui.core.status import RunResult, TaskSnapshot, TaskStatus
from taskgui.core.task import Command
from taskgui.store import codec
from taskgui.store.errors import (
    CodecError,
    DatabaseCorruptError,
    DatabaseLockedError,
    DatabasePathError,
    DatabaseReadOnlyError,
    DiskFullError,
    NewerSchemaError,
    SchedulerAlreadyRunningError,
    StoreError,
)
from taskgui.store.paths import DB_FILENAME, ENV_VAR, resolve_database_path
from taskgui.store.protocols import INTERRUPTED_ERROR, QuarantinedTask, RunRecord
from taskgui.store.sqlite import schema as schema_module
from taskgui.store.sqlite.connection import BUSY_TIMEOUT_MS, classify, move_aside, translate_errors
from taskgui.store.sqlite.lock import SchedulerLock, holder_pid, is_locked, lock_path_for
from taskgui.store.sqlite.opening import open_sqlite
from taskgui.store.sqlite.repository import SqliteRepository
from taskgui.store.sqlite.schema import APPLICATION_ID, SCHEMA_VERSION, migrate
from tests.helpers.factories import T0, at, fixed_retry, make_spec
from tests.helpers.store import ROOT, Driver, open_descriptors, raw_connection, rich_specs

OpenRepository = Callable[..., SqliteRepository]
CHILD_ENV = {**os.environ, "PYTHONPATH": str(ROOT)}


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / DB_FILENAME


@pytest.fixture
def open_repository(db: Path) -> Iterator[OpenRepository]:
    """Opens SqliteRepositories (on ``db`` unless told otherwise); closes them all."""
    opened: list[SqliteRepository] = []

    def factory(path: Path | None = None, **kwargs: Any) -> SqliteRepository:
        repository = SqliteRepository(path or db, **kwargs)
        opened.append(repository)
        return repository

    yield factory
    for repository in opened:
        repository.close()


def run_child(code: str, *args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=ROOT,
        env=CHILD_ENV,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def child_report(code: str, *args: str) -> dict[str, Any]:
    done = run_child(code, *args)
    assert done.returncode == 0, done.stderr
    report: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return report


def file_mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def folder_listing(folder: Path) -> list[str]:
    return sorted(entry.name for entry in folder.iterdir())


# ------------------------------------------------------------- durability


def test_everything_survives_closing_and_reopening(
    db: Path, open_repository: OpenRepository
) -> None:
    first = open_repository()
    driver = Driver(first)
    retrying = driver.add_one(make_spec(0, retry=fixed_retry(3, delay=60), first_run_at=at(5)))
    [ticket] = driver.due(at(5))
    driver.finish(ticket, RunOutcome.FAILED, at(6), RunResult(exit_code=2, error="exit 2"))
    running = driver.add_one(make_spec(0, first_run_at=at(7)))
    driver.due(at(7))
    ids = [driver.add_one(spec) for spec in rich_specs().values()]
    before = first.load(at(8))
    runs_before = {task_id: first.runs(task_id) for task_id in [*ids, retrying, running]}
    assert first.get(retrying).state is TaskState.RETRYING
    assert runs_before[running][0].outcome is None
    first.close()

    second = open_repository()

    assert second.load(at(9)) == before
    assert {task_id: second.runs(task_id) for task_id in runs_before} == runs_before
    assert second.get(retrying).status.next_run_at == at(66)
    assert [spec.id for spec in second.add_tasks([make_spec(0)], at(9))] == [max(ids) + 1]


def test_a_commit_is_on_disk_before_apply_returns(
    db: Path, open_repository: OpenRepository
) -> None:
    """Commit before acting: another connection sees the run before its process starts."""
    driver = Driver(open_repository())
    task_id = driver.add_one()
    driver.due(T0)

    with raw_connection(db) as other:
        rows = other.execute("SELECT task_id, outcome FROM runs").fetchall()
        state = other.execute("SELECT state FROM tasks WHERE id = ?", (task_id,)).fetchone()
    assert rows == [(task_id, None)]
    assert state == ("running",)


SURROGATE_NAME = "report " + b"\xff".decode("utf-8", "surrogateescape")


def test_a_batch_that_fails_half_way_through_the_insert_leaves_nothing(
    db: Path, open_repository: OpenRepository
) -> None:
    """The second row fails inside executemany, after the first was inserted."""
    repository = open_repository()
    batch = [make_spec(0, name="one"), make_spec(0, name=SURROGATE_NAME), make_spec(0)]

    with pytest.raises((UnicodeEncodeError, TaskguiError)):
        repository.add_tasks(batch, T0)

    assert repository.list_tasks() == []
    with raw_connection(db) as other:
        assert other.execute("SELECT count(*) FROM tasks").fetchone() == (0,)
    assert [spec.id for spec in repository.add_tasks([make_spec(0), make_spec(0)], T0)] == [1, 2]


def test_text_sqlite_cannot_store_is_refused_with_a_taskgui_error(
    open_repository: OpenRepository,
) -> None:
    repository = open_repository()
    with pytest.raises(TaskguiError):
        repository.add_tasks([make_spec(0, name=SURROGATE_NAME)], T0)
    with pytest.raises(TaskguiError):
        repository.add_tasks([make_spec(0, concurrency_key=SURROGATE_NAME)], T0)


def test_a_request_error_with_text_sqlite_cannot_store_is_still_answered(
    open_repository: OpenRepository,
) -> None:
    """The answer to a request quotes an error, which may quote a name from outside."""
    repository = open_repository()
    request_id = repository.submit_request("cancel", 1, None, T0)

    repository.complete_request(request_id, f"no such file: {SURROGATE_NAME}", at(1))

    assert repository.request_outcome(request_id) == (True, "no such file: report \ufffd")


def test_a_second_repository_sees_changes_and_gets_distinct_ids(
    open_repository: OpenRepository,
) -> None:
    scheduler = open_repository()
    cli = open_repository()
    version = scheduler.data_version()

    added = cli.add_tasks([make_spec(0), make_spec(0)], T0)

    assert scheduler.data_version() != version
    assert [task.id for task in scheduler.list_tasks()] == [spec.id for spec in added]
    more = scheduler.add_tasks([make_spec(0)], T0)
    again = cli.add_tasks([make_spec(0)], T0)
    assert [spec.id for spec in [*added, *more, *again]] == [1, 2, 3, 4]


def test_another_process_reads_what_due_tasks_wait_for_until_the_next_start(
    open_repository: OpenRepository,
) -> None:
    scheduler = open_repository()
    cli = open_repository()
    (first, second) = scheduler.add_tasks([make_spec(0), make_spec(0, concurrency_key="k")], T0)
    waiting = TaskStatus(next_run_at=T0, waiting=WaitReason.WORKER)
    keyed = TaskStatus(next_run_at=T0, waiting=WaitReason.CONCURRENCY_KEY)
    scheduler.apply(
        [TaskChanged(TaskSnapshot(first, waiting)), TaskChanged(TaskSnapshot(second, keyed))], T0
    )
    assert cli.wait_reasons() == {
        first.id: WaitReason.WORKER,
        second.id: WaitReason.CONCURRENCY_KEY,
    }
    assert cli.get(first.id).status.waiting is None  # a snapshot read back never claims it
    scheduler.apply([TaskChanged(TaskSnapshot(first, waiting._replace(waiting=None)))], T0)
    assert cli.wait_reasons() == {second.id: WaitReason.CONCURRENCY_KEY}
    recover(open_repository(), Engine(), at(1))  # the next start: every old wait is over
    assert cli.wait_reasons() == {}


def test_state_survives_a_sigkilled_process(db: Path, open_repository: OpenRepository) -> None:
    code = """
import os, signal, sys
from pathlib import Path
from taskgui.store.sqlite.repository import SqliteRepository
from tests.helpers.factories import T0, fixed_retry, make_spec
from tests.helpers.store import Driver
driver = Driver(SqliteRepository(Path(sys.argv[1])))
driver.add_one(make_spec(0, retry=fixed_retry(3, delay=60)))
driver.due(T0)
print("dispatched", flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""
    done = run_child(code, str(db))
    assert done.returncode == -signal.SIGKILL, done.stderr
    assert done.stdout.strip() == "dispatched"

    repository = open_repository()
    recovery = recover(repository, Engine(), at(30))

    assert [run.task_id for run in recovery.interrupted] == [1]
    assert any(isinstance(event, RetryScheduled) for event in recovery.events)
    assert repository.get(1).state is TaskState.RETRYING


# ---------------------------------------------------------------- privacy


def test_a_new_database_and_its_folder_are_private(tmp_path: Path) -> None:
    path = tmp_path / "made" / "for" / "taskgui" / DB_FILENAME
    repository = SqliteRepository(path)
    try:
        repository.add_tasks([make_spec(0)], T0)  # the WAL files exist now
        assert file_mode(path.parent) == 0o700
        assert file_mode(path) == 0o600
        for sidecar in ("-wal", "-shm"):
            assert file_mode(path.with_name(path.name + sidecar)) == 0o600, sidecar
    finally:
        repository.close()


def test_an_existing_readable_file_is_tightened_but_a_shared_folder_is_left_alone(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "project"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)
    (folder / "Makefile").touch()  # the folder holds more than taskgui's files
    path = folder / "schedule.sqlite3"
    path.touch()
    path.chmod(0o644)

    SqliteRepository(path).close()

    assert file_mode(path) == 0o600
    assert file_mode(folder) == 0o755


def test_a_wide_folder_that_holds_only_taskguis_files_is_made_private(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # What following the old error ("mkdir ~/.local/share/taskgui") left behind.
    folder = tmp_path / "taskgui"
    folder.mkdir()
    folder.chmod(0o755)
    path = folder / "taskgui.sqlite3"
    SqliteRepository(path).close()  # adds the file, its -wal and -shm
    folder.chmod(0o755)

    with caplog.at_level(logging.INFO, logger="taskgui"):
        SqliteRepository(path).close()

    assert file_mode(folder) == 0o700
    assert f"made {folder} private" in caplog.text


def test_a_folder_given_as_the_database_keeps_its_mode(tmp_path: Path) -> None:
    folder = tmp_path / "not-a-file"
    folder.mkdir()
    folder.chmod(0o755)

    with pytest.raises(StoreError):
        SqliteRepository(folder)

    assert file_mode(folder) == 0o755


def test_a_folder_given_as_the_database_says_so_and_is_never_moved(tmp_path: Path) -> None:
    folder = tmp_path / "schedules"
    folder.mkdir()
    (folder / "notes.txt").write_text("mine")
    folder.chmod(0o755)

    with pytest.raises(DatabasePathError) as caught:
        open_sqlite(folder, T0, reset_corrupt=True)  # not "damaged": not a file at all

    message = str(caught.value)
    assert f"{folder} is a folder, not a database file" in message
    assert str(folder / DB_FILENAME) in message
    assert caught.value.environment and caught.value.path == folder
    assert file_mode(folder) == 0o755
    assert folder_listing(folder) == ["notes.txt"]
    assert folder_listing(tmp_path) == ["schedules"]


def test_a_device_or_pipe_given_as_the_database_is_refused_untouched(tmp_path: Path) -> None:
    pipe = tmp_path / "a-pipe"
    os.mkfifo(pipe, 0o644)
    pipe.chmod(0o644)

    with pytest.raises(DatabasePathError) as caught:
        SqliteRepository(pipe)

    assert "not a regular file" in str(caught.value)
    assert file_mode(pipe) == 0o644
    assert stat.S_ISFIFO(pipe.stat().st_mode)


@pytest.mark.parametrize("content", [b"my notes\n" * 100, b""], ids=["text", "empty"])
def test_only_a_file_that_opens_as_a_database_is_made_private(
    tmp_path: Path, content: bytes
) -> None:
    """A file given by mistake is refused with its mode as it was; an empty file is
    a new database, and made private like one."""
    path = tmp_path / "given.sqlite3"
    path.write_bytes(content)
    path.chmod(0o644)

    if content:
        with pytest.raises(DatabaseCorruptError):
            SqliteRepository(path)
        assert file_mode(path) == 0o644
        assert path.read_bytes() == content
    else:
        SqliteRepository(path).close()
        assert file_mode(path) == 0o600


def test_a_newer_file_keeps_its_mode(db: Path) -> None:
    with raw_connection(db) as connection:  # as a newer taskgui marks its files
        connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    db.chmod(0o644)

    with pytest.raises(NewerSchemaError):
        SqliteRepository(db)

    assert file_mode(db) == 0o644


def test_pragmas_wal_foreign_keys_and_busy_timeout(
    db: Path, open_repository: OpenRepository
) -> None:
    repository = open_repository()
    own = repository._connection

    with raw_connection(db) as other:
        # journal_mode=WAL is stored in the file, so any connection reports it.
        assert other.execute("PRAGMA journal_mode").fetchone() == ("wal",)
    # foreign_keys, busy_timeout and synchronous are per connection: ask the repository's.
    assert own.execute("PRAGMA foreign_keys").fetchone() == (1,)
    assert own.execute("PRAGMA busy_timeout").fetchone() == (BUSY_TIMEOUT_MS,)
    assert own.execute("PRAGMA synchronous").fetchone() == (1,)  # NORMAL


def test_foreign_keys_are_enforced_so_runs_go_with_their_task(
    db: Path, open_repository: OpenRepository
) -> None:
    repository = open_repository()
    driver = Driver(repository)
    task_id = driver.add_one(make_spec(0, recurrence=Every(timedelta(seconds=10))))
    for index in range(3):
        [ticket] = driver.due(at(10 * index))
        driver.finish(ticket, RunOutcome.SUCCEEDED, at(10 * index + 1))

    driver.remove(task_id, at(30))

    with raw_connection(db) as other:
        assert other.execute("SELECT count(*) FROM runs").fetchone() == (0,)
        assert other.execute("SELECT count(*) FROM tasks").fetchone() == (0,)
    with pytest.raises(sqlite3.IntegrityError):
        repository._connection.execute(
            "INSERT INTO runs (task_id, attempt, kind, scheduled_at) VALUES (99, 1, 'retry', 0)"
        )


# ------------------------------------------------------------- migrations


@dataclass(frozen=True)
class Expected:
    """What a migrated file must still hold."""

    tasks: list[TaskSnapshot]
    runs: dict[int, list[RunRecord]]  # newest first, as runs() answers
    quarantined: list[QuarantinedTask] = field(default_factory=list)
    next_id: int = 1


def _insert_task_row(connection: sqlite3.Connection, values: tuple[Any, ...]) -> None:
    """A task row as any version wrote it: ``TASK_COLUMNS``, created and updated at 0.

    Columns a later version added (``notify``) are left out where the file lacks them:
    their values here are what the migration gives every old row (NULL)."""
    have = {row[1] for row in connection.execute("PRAGMA table_info(tasks)")}
    pairs = [(c, v) for c, v in zip(codec.TASK_COLUMNS, values, strict=True) if c in have]
    assert all(v is None for c, v in zip(codec.TASK_COLUMNS, values, strict=True) if c not in have)
    connection.execute(
        f"INSERT INTO tasks ({', '.join(c for c, _ in pairs)}, created_at, updated_at) "
        f"VALUES ({', '.join('?' * len(pairs))}, 0, 0)",
        [v for _, v in pairs],
    )


def _insert_v1_rows(connection: sqlite3.Connection) -> Expected:
    """Rows a version-1 file could hold: a task mid-retry and its two runs."""
    spec = rich_specs()["exponential-jitter-retry"].with_id(7)
    status = TaskStatus(
        state=TaskState.RETRYING,
        attempt=1,
        next_run_at=at(70),
        slot_kind=SlotKind.RETRY,
        scheduled_at=at(10),
        slot_attempt=2,
        deferred_at=at(3600),
        last_outcome=RunOutcome.FAILED,
        last_run_at=at(11),
    )
    _insert_task_row(connection, (7, *codec.spec_values(spec), *codec.status_values(status)))
    runs = [
        RunRecord(
            id=3,
            task_id=7,
            attempt=1,
            kind=SlotKind.OCCURRENCE,
            scheduled_at=at(10),
            started_at=at(10),
            finished_at=at(11),
            outcome=RunOutcome.FAILED,
            exit_code=1,
            error="exit status 1",
            output="no route to host\n",
        ),
        RunRecord(
            id=4,
            task_id=7,
            attempt=2,
            kind=SlotKind.RETRY,
            scheduled_at=at(11),
            started_at=at(70),
            finished_at=None,
            outcome=None,
        ),
    ]
    for run in runs:
        connection.execute(
            "INSERT INTO runs (id, task_id, attempt, kind, scheduled_at, started_at, "
            "finished_at, outcome, exit_code, error, output) VALUES (?,?,?,?,?,?,?,?,?,?,?)",
            (
                run.id,
                run.task_id,
                run.attempt,
                run.kind.value,
                codec.to_us(run.scheduled_at),
                codec.opt_to_us(run.started_at),
                codec.opt_to_us(run.finished_at),
                None if run.outcome is None else run.outcome.value,
                run.exit_code,
                run.error,
                run.output,
            ),
        )
    return Expected(tasks=[TaskSnapshot(spec, status)], runs={7: list(reversed(runs))}, next_id=8)


def _insert_v2_rows(connection: sqlite3.Connection) -> Expected:
    """Version 2 added the quarantine: also a task set aside there."""
    expected = _insert_v1_rows(connection)
    spec = make_spec(8, name="set aside")
    bad = (8, *codec.spec_values(spec), *codec.status_values(TaskStatus()))
    _insert_task_row(connection, (bad[0], bad[1], "not json", *bad[3:]))
    error = "the stored command is not valid JSON (hand-edited)"
    connection.execute("INSERT INTO quarantine (task_id, error, at) VALUES (8, ?, 0)", (error,))
    return replace(expected, quarantined=[QuarantinedTask(8, error)], next_id=9)


def _insert_v3_rows(connection: sqlite3.Connection) -> Expected:
    """Version 3 added requests between processes: also an answered one."""
    expected = _insert_v2_rows(connection)
    connection.execute(
        "INSERT INTO requests (op, task_id, payload, created_at, done_at, error) "
        "VALUES ('cancel', 1, NULL, 0, 1, NULL)"
    )
    return expected


def _insert_v4_rows(connection: sqlite3.Connection) -> Expected:
    """Version 4 recorded each run's pid: also a task left running, with its pid."""
    expected = _insert_v3_rows(connection)
    spec = make_spec(9, name="left running")
    status = TaskStatus(
        state=TaskState.RUNNING, attempt=1, last_run_at=at(20), slot_kind=None, next_run_at=None
    )
    _insert_task_row(connection, (9, *codec.spec_values(spec), *codec.status_values(status)))
    run = RunRecord(
        id=5,
        task_id=9,
        attempt=1,
        kind=SlotKind.OCCURRENCE,
        scheduled_at=at(20),
        started_at=at(20),
        finished_at=None,
        outcome=None,
        pid=4242,
    )
    connection.execute(
        "INSERT INTO runs (id, task_id, attempt, kind, scheduled_at, started_at, pid) "
        "VALUES (5, 9, 1, 'occurrence', ?, ?, 4242)",
        (codec.to_us(at(20)), codec.to_us(at(20))),
    )
    return replace(
        expected,
        tasks=[*expected.tasks, TaskSnapshot(spec, status)],
        runs={**expected.runs, 9: [run]},
        next_id=10,
    )


def _insert_v5_rows(connection: sqlite3.Connection) -> Expected:
    """Version 7 counts a missed record's occurrences in a column: records written
    before it carry the count in their text only, which the upgrade reads. (Version
    5 itself only changed an index.)"""
    expected = _insert_v4_rows(connection)
    texts = {
        6: "skipped 6 occurrences (the machine slept, or the clock jumped)",
        1: "skipped 1 occurrence (the previous run was still going)",
        10_000: "skipped at least 10000 occurrences (taskgui was not running)",
    }
    missed = []
    for row_id, (count, text) in enumerate(texts.items(), start=6):
        connection.execute(
            "INSERT INTO runs (id, task_id, attempt, kind, scheduled_at, finished_at, "
            "outcome, error) VALUES (?, 7, 0, 'occurrence', ?, ?, 'missed', ?)",
            (row_id, codec.to_us(at(100 * row_id)), codec.to_us(at(100 * row_id + 1)), text),
        )
        missed.append(
            RunRecord(
                id=row_id,
                task_id=7,
                attempt=0,
                kind=SlotKind.OCCURRENCE,
                scheduled_at=at(100 * row_id),
                started_at=None,
                finished_at=at(100 * row_id + 1),
                outcome=RunOutcome.MISSED,
                error=text,
                missed=count,
            )
        )
    runs = {**expected.runs, 7: [*reversed(missed), *expected.runs[7]]}
    return replace(expected, runs=runs)


# Representative rows for each released schema version. Adding migration N+1 means
# adding the rows a version-N file can hold here (the test below insists).
def _insert_v6_rows(connection: sqlite3.Connection) -> Expected:
    """Version 6 only marked the file (application_id): the rows a version-5 file holds."""
    return _insert_v5_rows(connection)


def _insert_v7_rows(connection: sqlite3.Connection) -> Expected:
    """Version 8 added tasks.waiting only: a version-7 file's rows (its missed records
    carry their count in runs.missed already, so the text-only ones of v5 do not fit)."""
    return _insert_v4_rows(connection)


def _insert_v8_rows(connection: sqlite3.Connection) -> Expected:
    """Version 9 added tasks.notify only (NULL: the default rule): a version-8 file's
    rows are those of version 7, each read back with ``notify=None``."""
    return _insert_v7_rows(connection)


def _insert_v9_rows(connection: sqlite3.Connection) -> Expected:
    """Version 10 added tasks.rules (spread, run conditions, a pause's end): a version-9
    file's rows have none, and read back without them."""
    return _insert_v8_rows(connection)


def _insert_v10_rows(connection: sqlite3.Connection) -> Expected:
    """Version 11 added tasks.after_marks (fan-in marks, NULL for a task with none): a
    version-10 file's rows read back with no marks and no upstreams."""
    return _insert_v9_rows(connection)


ROW_WRITERS: dict[int, Callable[[sqlite3.Connection], Expected]] = {
    1: _insert_v1_rows,
    2: _insert_v2_rows,
    3: _insert_v3_rows,
    4: _insert_v4_rows,
    5: _insert_v5_rows,
    6: _insert_v6_rows,
    7: _insert_v7_rows,
    8: _insert_v8_rows,
    9: _insert_v9_rows,
    10: _insert_v10_rows,
}


def _schema_of(path: Path) -> list[tuple[str, str, str]]:
    with raw_connection(path) as connection:
        rows = connection.execute(
            "SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' "
            "ORDER BY type, name"
        ).fetchall()
    return [(kind, name, " ".join(str(sql).split())) for kind, name, sql in rows]


def test_every_old_version_has_representative_rows() -> None:
    assert set(ROW_WRITERS) == set(range(1, SCHEMA_VERSION))


@pytest.mark.parametrize("version", range(SCHEMA_VERSION))
def test_a_file_at_every_older_version_is_upgraded_with_its_rows(
    tmp_path: Path, open_repository: OpenRepository, version: int
) -> None:
    path = tmp_path / f"v{version}.sqlite3"
    connection = sqlite3.connect(path, isolation_level=None)
    try:
        assert migrate(connection, path, target=version) == 0
        assert connection.execute("PRAGMA user_version").fetchone() == (version,)
        expected = ROW_WRITERS[version](connection) if version >= 1 else None
    finally:
        connection.close()

    repository = open_repository(path)

    with raw_connection(path) as other:
        assert other.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
        assert other.execute("PRAGMA application_id").fetchone() == (APPLICATION_ID,)
    fresh = tmp_path / "fresh.sqlite3"
    open_repository(fresh)
    assert _schema_of(path) == _schema_of(fresh)
    expected = expected or Expected(tasks=[], runs={})
    loaded = repository.load(T0)
    assert loaded.tasks == expected.tasks
    assert loaded.quarantined == expected.quarantined
    for task_id, runs in expected.runs.items():
        assert repository.runs(task_id) == runs
    # A start reads tasks left running whole (through their index), the rest deferred.
    start = repository.load_for_start(T0)
    running = [task for task in expected.tasks if task.state is TaskState.RUNNING]
    assert start.tasks == running
    assert start.deferred is not None
    assert {task_id for task_id, _ in start.deferred.queued} == {
        task.id for task in expected.tasks if task.state is not TaskState.RUNNING
    }
    assert [spec.id for spec in repository.add_tasks([make_spec(0)], T0)] == [expected.next_id]
    repository.check_integrity()


def test_opening_a_current_file_again_changes_nothing(
    db: Path, open_repository: OpenRepository
) -> None:
    open_repository().add_tasks([make_spec(0)], T0)
    schema = _schema_of(db)

    again = open_repository()

    assert _schema_of(db) == schema
    assert len(again.list_tasks()) == 1


def test_a_failed_migration_step_leaves_the_file_at_its_old_version(tmp_path: Path) -> None:
    path = tmp_path / "v1.sqlite3"
    with raw_connection(path) as connection:
        migrate(connection, path, target=1)
        # Something already holds the name of the *second* statement of step 2, so
        # the step fails after its first statement (CREATE TABLE quarantine) ran.
        connection.execute("CREATE INDEX runs_open ON tasks (name)")

    with pytest.raises(StoreError) as caught:
        SqliteRepository(path)

    assert str(path) in str(caught.value)
    assert open_descriptors(path) == []
    with raw_connection(path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone() == (1,)
        tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
    assert "quarantine" not in tables


def test_a_step_another_process_took_meanwhile_is_not_taken_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A daemon and the CLI opening a new file at once: both read version 0, one
    migrates, the other waits for the write lock and must then find the work done."""
    path = tmp_path / "race.sqlite3"
    with raw_connection(path) as other:
        migrate(other, path)  # the other process, first
    real = schema_module.schema_version
    stale = [0]  # this process read the version before that commit

    def version(connection: sqlite3.Connection) -> int:
        return stale.pop() if stale else real(connection)

    monkeypatch.setattr(schema_module, "schema_version", version)
    with raw_connection(path) as connection:
        assert migrate(connection, path) == 0
        assert real(connection) == SCHEMA_VERSION
    assert len(SqliteRepository(path).list_tasks()) == 0


def test_a_file_from_a_newer_taskgui_is_refused_and_left_alone(db: Path) -> None:
    # A newer taskgui writes WAL files too: make one, then claim a newer schema.
    repository = SqliteRepository(db)
    repository.add_tasks([make_spec(0)], T0)
    repository.close()
    with raw_connection(db) as connection:
        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    assert open_descriptors(db) == []
    original = db.read_bytes()
    listing = folder_listing(db.parent)

    with pytest.raises(NewerSchemaError) as caught:
        SqliteRepository(db)

    message = str(caught.value)
    assert str(db) in message and "upgrade" in message
    assert f"schema {SCHEMA_VERSION + 1}" in message
    assert caught.value.environment and caught.value.path == db
    assert db.read_bytes() == original
    assert folder_listing(db.parent) == listing
    assert open_descriptors(db) == []


def test_a_newer_file_in_rollback_journal_mode_is_not_modified(db: Path) -> None:
    with raw_connection(db) as connection:
        connection.execute("CREATE TABLE future (x)")
        connection.execute(f"PRAGMA application_id = {APPLICATION_ID}")
        connection.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    original = db.read_bytes()

    with pytest.raises(NewerSchemaError):
        SqliteRepository(db)

    assert db.read_bytes() == original


def test_a_migration_that_fills_the_disk_reports_the_full_disk(db: Path) -> None:
    """Reported as a full disk (whether or not SQLite already rolled back), and the
    file stays at its old version."""
    with raw_connection(db) as connection:
        connection.execute("PRAGMA journal_mode = WAL")  # as connect() leaves it
        connection.execute("PRAGMA max_page_count = 1")
        with pytest.raises(sqlite3.OperationalError) as raised:
            migrate(connection, db)
        assert not connection.in_transaction
        assert connection.execute("PRAGMA user_version").fetchone() == (0,)

    assert raised.value.sqlite_errorname == "SQLITE_FULL"
    assert isinstance(classify(raised.value, db), DiskFullError)


# ------------------------------------------------------------------ damage

CORRUPTIONS = {
    "random bytes": random.Random(20261130).randbytes(16_384),
    "text file": b"these are my notes, not a database\n" * 200,
    "short text": b"hello\n",
}


@pytest.mark.parametrize("content", CORRUPTIONS.values(), ids=list(CORRUPTIONS))
def test_a_file_that_is_not_a_database_is_refused_untouched(db: Path, content: bytes) -> None:
    db.write_bytes(content)
    db.chmod(0o600)

    with pytest.raises(DatabaseCorruptError) as caught:
        SqliteRepository(db)

    message = str(caught.value)
    assert str(db) in message
    assert "--reset-corrupt" in message and "backup" in message
    assert caught.value.environment
    assert db.read_bytes() == content
    assert folder_listing(db.parent) == [db.name]
    assert open_descriptors(db) == []


def _damage_pages(db: Path) -> bytes:
    """A real database whose header is fine but whose later pages are garbage."""
    repository = SqliteRepository(db)
    repository.add_tasks([make_spec(0, command=Command(line="z" * 3_000)) for _ in range(50)], T0)
    repository.close()
    data = bytearray(db.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    data[3 * page : 6 * page] = b"\x5a" * (3 * page)
    db.write_bytes(bytes(data))
    return bytes(data)


def test_a_database_with_damaged_pages_is_refused_untouched(db: Path) -> None:
    damaged = _damage_pages(db)

    with pytest.raises(DatabaseCorruptError) as caught:
        repository, _ = open_sqlite(db, T0)
        repository.close()

    assert str(db) in str(caught.value)
    assert db.read_bytes() == damaged


@pytest.mark.parametrize("content", CORRUPTIONS.values(), ids=list(CORRUPTIONS))
def test_reset_corrupt_moves_the_file_aside_and_starts_afresh(db: Path, content: bytes) -> None:
    db.write_bytes(content)

    repository, moved = open_sqlite(db, T0, reset_corrupt=True)
    try:
        assert moved is not None
        assert moved.parent == db.parent
        assert moved.name == f"{DB_FILENAME}.corrupt-20260101T120000"
        assert moved.read_bytes() == content
        [spec] = repository.add_tasks([make_spec(0)], T0)
        assert [task.id for task in repository.load(T0).tasks] == [spec.id]
    finally:
        repository.close()

    again, moved_again = open_sqlite(db, at(1), reset_corrupt=True)
    try:
        assert moved_again is None
        assert len(again.list_tasks()) == 1
    finally:
        again.close()


def test_reset_corrupt_moves_damaged_pages_and_their_wal_aside(db: Path) -> None:
    damaged = _damage_pages(db)

    repository, moved = open_sqlite(db, T0, reset_corrupt=True)
    try:
        assert moved is not None and moved.read_bytes() == damaged
        repository.add_tasks([make_spec(0)], T0)
    finally:
        repository.close()
    with raw_connection(db) as connection:
        assert connection.execute("SELECT count(*) FROM tasks").fetchone() == (1,)


def test_open_sqlite_closes_the_damaged_database_it_gave_up_on(db: Path) -> None:
    _damage_pages(db)
    gc.disable()  # the leak is only undone when a collection happens to run
    try:
        repository, moved = open_sqlite(db, T0, reset_corrupt=True)
        try:
            assert moved is not None
            assert open_descriptors(moved) == []
        finally:
            repository.close()
    finally:
        gc.enable()
        gc.collect()


def test_open_sqlite_closes_the_damaged_database_it_refuses(db: Path) -> None:
    damaged = _damage_pages(db)
    gc.disable()
    try:
        with pytest.raises(DatabaseCorruptError):
            open_sqlite(db, T0)
        assert open_descriptors(db) == []
    finally:
        gc.enable()
        gc.collect()
    assert db.read_bytes() == damaged


def test_moving_aside_twice_in_one_second_keeps_both(tmp_path: Path) -> None:
    db = tmp_path / DB_FILENAME
    db.write_bytes(b"first")
    (tmp_path / f"{DB_FILENAME}-wal").write_bytes(b"first wal")
    first = move_aside(db, T0)
    db.write_bytes(b"second")
    second = move_aside(db, T0)

    assert first.read_bytes() == b"first" and second.read_bytes() == b"second"
    assert second.name == f"{first.name}-2"
    assert first.with_name(first.name + "-wal").read_bytes() == b"first wal"
    assert not db.exists()


def test_check_integrity_passes_on_a_healthy_file(open_repository: OpenRepository) -> None:
    repository = open_repository()
    Driver(repository).add_one()
    repository.check_integrity()


# ---------------------------------------------------------------- read-only


def test_a_real_read_only_error_is_classified_with_what_to_do(db: Path) -> None:
    SqliteRepository(db).close()
    connection = sqlite3.connect(f"file:{db}?mode=ro", uri=True, isolation_level=None)
    try:
        with pytest.raises(sqlite3.OperationalError) as raised:
            connection.execute("INSERT INTO quarantine VALUES (1, 'x', 0)")
    finally:
        connection.close()
    assert raised.value.sqlite_errorname.startswith("SQLITE_READONLY")

    error = classify(raised.value, db)

    assert isinstance(error, DatabaseReadOnlyError)
    assert error.environment and error.path == db
    assert str(db) in str(error)
    assert "chmod" in str(error) and "--db" in str(error)


READ_ONLY_CHILD = """
import json, os, sys
from pathlib import Path
from taskgui.store.errors import StoreError
from taskgui.store.sqlite.repository import SqliteRepository
from tests.helpers.factories import T0, make_spec
if os.geteuid() == 0:  # root ignores file modes: become nobody (imports are done)
    os.setgroups([])
    os.setgid(65534)
    os.setuid(65534)
report = {"uid": os.geteuid()}
try:
    repository = SqliteRepository(Path(sys.argv[1]))
except StoreError as error:
    report["open"] = [type(error).__name__, str(error), error.environment]
else:
    report["tasks"] = len(repository.list_tasks())
    try:
        repository.add_tasks([make_spec(0)], T0)
        report["add"] = "ok"
    except StoreError as error:
        report["add"] = [type(error).__name__, str(error), error.environment]
    repository.close()
print(json.dumps(report))
"""


@pytest.fixture
def shared_folder() -> Iterator[Path]:
    """A folder outside tmp_path (whose parents are 0700) that 'nobody' can enter."""
    folder = Path(tempfile.mkdtemp(prefix="taskgui-ro-"))
    # Not only taskgui's files: a folder holding nothing else would be made private.
    (folder / "README").write_text("shared with another user\n")
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder)


@pytest.mark.parametrize("folder_writable", [False, True], ids=["ro-folder", "rw-folder"])
def test_a_read_only_database_says_so(shared_folder: Path, folder_writable: bool) -> None:
    db = shared_folder / DB_FILENAME
    repository = SqliteRepository(db)
    repository.add_tasks([make_spec(0)], T0)
    repository.close()
    db.chmod(0o444)
    if folder_writable:
        shared_folder.chmod(0o777)

    report = child_report(READ_ONLY_CHILD, str(db))

    assert report["uid"] != 0
    failure = report["open"] if not folder_writable else report["add"]
    if folder_writable:
        assert report["tasks"] == 1  # reading still works
    kind, message, environment = failure
    assert kind == "DatabaseReadOnlyError"
    assert environment is True
    assert str(db) in message and "--db" in message
    # The child may chmod only what it owns; as root the test's files are root's.
    remedy = "it belongs to the user" if os.geteuid() == 0 else "chmod u+w"
    assert remedy in message


def test_a_full_disk_is_reported_from_a_real_os_error(tmp_path: Path) -> None:
    if not Path("/dev/full").exists():
        pytest.skip("this system has no /dev/full to write to")
    db = tmp_path / DB_FILENAME

    with (
        pytest.raises(DiskFullError) as caught,
        translate_errors(db),
        open("/dev/full", "wb", buffering=0) as full,
    ):
        full.write(b"x")

    assert caught.value.environment
    assert str(db) in str(caught.value) and "nothing was lost" in str(caught.value)


# ---------------------------------------------------------------- disk full


def _fill_up(repository: SqliteRepository) -> None:
    """Let the file grow by one page at most: SQLite then fails with SQLITE_FULL."""
    connection = repository._connection
    pages = connection.execute("PRAGMA page_count").fetchone()[0]
    connection.execute(f"PRAGMA max_page_count = {pages + 1}")


def _make_room(repository: SqliteRepository) -> None:
    repository._connection.execute("PRAGMA max_page_count = 4294967294")


BIG_BATCH = [make_spec(0, command=Command(line="x" * 20_000)) for _ in range(40)]


def test_a_full_disk_loses_nothing(db: Path, open_repository: OpenRepository) -> None:
    repository = open_repository()
    driver = Driver(repository)
    kept = [driver.add_one() for _ in range(3)]
    [ticket] = driver.due(T0)
    before = repository.load(T0)
    runs_before = repository.runs(ticket.task_id)

    _fill_up(repository)
    with pytest.raises(StoreError):
        repository.add_tasks(BIG_BATCH, at(1))
    with pytest.raises(StoreError):
        driver.finish(ticket, RunOutcome.FAILED, at(2), RunResult(output="y" * 60_000))

    assert repository.load(at(3)) == before
    assert repository.runs(ticket.task_id) == runs_before  # still open, not half-written
    _make_room(repository)
    more = repository.add_tasks(BIG_BATCH[:2], at(4))
    assert [spec.id for spec in more] == [kept[-1] + 1, kept[-1] + 2]
    with raw_connection(db) as other:
        assert other.execute("SELECT count(*) FROM tasks").fetchone() == (5,)


def test_a_full_disk_is_reported_as_a_full_disk(open_repository: OpenRepository) -> None:
    repository = open_repository()
    repository.add_tasks([make_spec(0)], T0)
    _fill_up(repository)

    with pytest.raises(DiskFullError) as caught:
        repository.add_tasks(BIG_BATCH, at(1))

    assert "full" in str(caught.value) and str(repository.path) in str(caught.value)


def test_a_failed_commit_is_rolled_back_and_the_repository_stays_usable(
    db: Path, open_repository: OpenRepository
) -> None:
    """A COMMIT can fail with the transaction still open (a deferred constraint);
    it must be rolled back, or every later write fails 'within a transaction'."""
    repository = open_repository()
    [spec] = repository.add_tasks([make_spec(0)], T0)

    with pytest.raises(StoreError) as caught, repository._transaction() as connection:
        connection.execute("PRAGMA defer_foreign_keys = ON")
        connection.execute(
            "INSERT INTO runs (task_id, attempt, kind, scheduled_at) VALUES (999, 1, 'x', 0)"
        )

    assert "FOREIGN KEY" in str(caught.value)
    assert not repository._connection.in_transaction
    assert [s.id for s in repository.add_tasks([make_spec(0)], at(1))] == [spec.id + 1]
    with raw_connection(db) as other:
        assert other.execute("SELECT count(*) FROM runs").fetchone() == (0,)


def test_sqlite_full_is_classified_as_a_full_disk(db: Path) -> None:
    """classify() itself is right (the test above shows the error reaching it)."""
    with raw_connection(db) as connection:
        connection.execute("CREATE TABLE t (x)")
        pages = connection.execute("PRAGMA page_count").fetchone()[0]
        connection.execute(f"PRAGMA max_page_count = {pages}")
        with pytest.raises(sqlite3.OperationalError) as raised:
            connection.execute("INSERT INTO t VALUES (?)", ("x" * 100_000,))

    assert raised.value.sqlite_errorname == "SQLITE_FULL"
    assert isinstance(classify(raised.value, db), DiskFullError)


# ------------------------------------------------------------------ locked


def test_a_held_write_lock_is_classified_as_busy(db: Path) -> None:
    SqliteRepository(db).close()
    with raw_connection(db) as holder:
        holder.execute("BEGIN IMMEDIATE")
        impatient = sqlite3.connect(db, isolation_level=None, timeout=0)
        try:
            with pytest.raises(sqlite3.OperationalError) as raised:
                impatient.execute("BEGIN IMMEDIATE")
        finally:
            impatient.close()
        holder.execute("ROLLBACK")

    error = classify(raised.value, db)

    assert isinstance(error, DatabaseLockedError)
    assert error.environment and str(db) in str(error)


@pytest.mark.slow
def test_a_write_waits_out_the_busy_timeout_then_says_busy(
    db: Path, open_repository: OpenRepository
) -> None:
    repository = open_repository()
    with raw_connection(db) as holder:
        holder.execute("BEGIN IMMEDIATE")
        with pytest.raises(DatabaseLockedError) as caught:
            repository.add_tasks([make_spec(0)], T0)
        holder.execute("ROLLBACK")

    assert f"{BUSY_TIMEOUT_MS // 1000}s" in str(caught.value)
    assert [spec.id for spec in repository.add_tasks([make_spec(0)], T0)] == [1]


def test_other_database_errors_are_not_blamed_on_the_environment(db: Path) -> None:
    with raw_connection(db) as connection:
        connection.execute("CREATE TABLE t (x NOT NULL)")
        with pytest.raises(sqlite3.IntegrityError) as raised:
            connection.execute("INSERT INTO t VALUES (NULL)")

    error = classify(raised.value, db)

    assert type(error) is StoreError
    assert not error.environment
    assert str(db) in str(error)


# ---------------------------------------------------------------- quarantine

QUARANTINE_CASES = {
    "newer retry format": ("retry", '{"v": 99}', "format version 99"),
    "command not json": ("command", "not json", "not valid JSON"),
    "unknown schedule": ("recurrence", '{"v": 1, "kind": "hourly"}', "unknown schedule kind"),
    "schedule not an object": ("recurrence", '["v", 1]', "not a JSON object"),
    "unknown state": ("state", "sleeping", "sleeping"),
    "invalid retry": (
        "retry",
        '{"v": 1, "backoff": "fixed", "max_attempts": 0, "base": 1, "max": 1}',
        "max attempts",
    ),
    "time out of range": ("first_run_at", 2**62, "out of range"),
}


@pytest.mark.parametrize(
    ("column", "value", "phrase"), QUARANTINE_CASES.values(), ids=list(QUARANTINE_CASES)
)
def test_a_row_that_cannot_be_decoded_is_quarantined_not_lost(
    db: Path, open_repository: OpenRepository, column: str, value: object, phrase: str
) -> None:
    repository = open_repository()
    driver = Driver(repository)
    first, bad, last = (driver.add_one(make_spec(0, name=f"t{i}")) for i in range(3))
    good = [task for task in repository.load(T0).tasks if task.id != bad]
    with raw_connection(db) as other:
        other.execute(f"UPDATE tasks SET {column} = ? WHERE id = ?", (value, bad))

    loaded = repository.load(at(1))

    assert loaded.tasks == good
    [quarantined] = loaded.quarantined
    assert quarantined.task_id == bad
    assert phrase in quarantined.error
    with raw_connection(db) as other:
        assert other.execute("SELECT count(*) FROM tasks WHERE id = ?", (bad,)).fetchone() == (1,)
    assert repository.load(at(2)) == loaded  # still reported, still kept
    assert repository.quarantined() == [quarantined]
    assert [task.id for task in repository.list_tasks()] == [first, last]
    assert repository.quarantined_row(bad)[column] == value
    with pytest.raises(CodecError):
        repository.get(bad)
    reopened = open_repository()
    assert reopened.load(at(3)) == loaded


def test_a_wrongly_typed_json_value_is_quarantined(
    db: Path, open_repository: OpenRepository
) -> None:
    repository = open_repository()
    [good, bad] = repository.add_tasks([make_spec(0), make_spec(0)], T0)
    with raw_connection(db) as other:
        other.execute(
            "UPDATE tasks SET command = ? WHERE id = ?",
            ('{"v": 1, "line": "true", "cwd": 5}', bad.id),
        )

    loaded = repository.load(at(1))

    assert [task.id for task in loaded.tasks] == [good.id]
    assert [entry.task_id for entry in loaded.quarantined] == [bad.id]


def test_a_corrupt_row_is_left_out_of_lists_and_named_by_get_before_any_load(
    db: Path, open_repository: OpenRepository
) -> None:
    """The CLI lists and shows tasks without loading the schedule (which quarantines)."""
    repository = open_repository()
    [good, bad, cwd] = repository.add_tasks([make_spec(0), make_spec(0), make_spec(0)], T0)
    with raw_connection(db) as other:
        other.execute("UPDATE tasks SET command = 'not json' WHERE id = ?", (bad.id,))
        other.execute(
            "UPDATE tasks SET command = ? WHERE id = ?",
            ('{"v": 1, "line": "true", "cwd": 5}', cwd.id),
        )

    assert [task.id for task in repository.list_tasks()] == [good.id]
    assert [task.id for task in repository.list_tasks(TaskState.PENDING)] == [good.id]
    cases = ((bad.id, "not valid JSON"), (cwd.id, "field 'cwd': expected text or null"))
    for task_id, phrase in cases:
        with pytest.raises(CodecError) as caught:
            repository.get(task_id)
        message = str(caught.value)
        assert message.startswith(f"task {task_id}: ") and phrase in message
        assert str(db) in message and "backup" in message
    assert repository.quarantined() == []  # reading wrote nothing
    assert repository.get(good.id).id == good.id


def test_the_decoder_turns_any_surprise_into_a_codec_error_naming_the_task() -> None:
    row = list(codec.new_task_row(make_spec(7), 0)[: len(codec.TASK_COLUMNS)])
    # JSON nested deeper than the parser's recursion limit: no ValueError, a RecursionError.
    row[codec.TASK_COLUMNS.index("command")] = (
        '{"v": 1, "line": ' + "[" * 100_000 + "]" * 100_000 + "}"
    )

    with pytest.raises(CodecError, match=r"^task 7: the stored command is not valid JSON"):
        codec.RowDecoder().snapshot(tuple(row))


def test_removing_a_quarantined_task_clears_its_quarantine(
    db: Path, open_repository: OpenRepository
) -> None:
    repository = open_repository()
    [spec] = repository.add_tasks([make_spec(0)], T0)
    with raw_connection(db) as other:
        other.execute("UPDATE tasks SET command = 'not json' WHERE id = ?", (spec.id,))
    assert [entry.task_id for entry in repository.load(T0).quarantined] == [spec.id]

    repository.apply([TaskRemoved(spec.id)], at(1))

    assert repository.load(at(2)).quarantined == []
    assert repository.quarantined() == []


def test_quarantine_records_the_problem_per_task(db: Path, open_repository: OpenRepository) -> None:
    repository = open_repository()
    specs = repository.add_tasks([make_spec(0) for _ in range(4)], T0)
    with raw_connection(db) as other:
        other.execute("UPDATE tasks SET retry = '{\"v\": 2}' WHERE id = ?", (specs[1].id,))
        other.execute("UPDATE tasks SET command = '' WHERE id = ?", (specs[3].id,))

    loaded = repository.load(T0)

    assert [task.id for task in loaded.tasks] == [specs[0].id, specs[2].id]
    assert [entry.task_id for entry in loaded.quarantined] == [specs[1].id, specs[3].id]
    assert "retry policy" in loaded.quarantined[0].error
    assert "command" in loaded.quarantined[1].error
    assert all(isinstance(entry, QuarantinedTask) for entry in loaded.quarantined)


# ------------------------------------------------------------------ recovery


def test_recovery_after_a_restart_retries_the_interrupted_run(
    db: Path, open_repository: OpenRepository
) -> None:
    before = Driver(open_repository())
    retried = before.add_one(make_spec(0, retry=fixed_retry(3, delay=60), first_run_at=at(10)))
    given_up = before.add_one(make_spec(0, retry=RetryPolicy.no_retry(), first_run_at=at(10)))
    finished = before.add_one(make_spec(0, first_run_at=at(100_000)))
    before.run_once(finished, T0)
    assert len(before.due(at(10), workers=2)) == 2
    before.repository.close()

    repository = open_repository()
    recovery = recover(repository, Engine(), at(30))

    assert sorted(run.task_id for run in recovery.interrupted) == [retried, given_up]
    assert RetryScheduled(retried, 2, 3, at(90), timedelta(seconds=60)) in recovery.events
    assert any(
        isinstance(event, TaskExhausted) and event.task_id == given_up for event in recovery.events
    )
    assert recovery.quarantined == [] and recovery.task_count == 3
    repository.close()

    after = open_repository()
    task = after.get(retried)
    assert task.state is TaskState.RETRYING
    assert (task.status.next_run_at, task.status.slot_attempt) == (at(90), 2)
    assert after.get(given_up).state is TaskState.EXHAUSTED
    for task_id in (retried, given_up):
        [run] = after.runs(task_id)
        assert (run.outcome, run.finished_at, run.error) == (
            RunOutcome.INTERRUPTED,
            at(30),
            INTERRUPTED_ERROR,
        )
    assert [run.outcome for run in after.runs(finished)] == [RunOutcome.SUCCEEDED]
    assert after.interrupt_open_runs(at(31)) == []


def test_recovery_defers_a_bad_row_and_hydrating_quarantines_it(
    db: Path, open_repository: OpenRepository
) -> None:
    repository = open_repository()
    [good, bad] = repository.add_tasks([make_spec(0), make_spec(0)], T0)
    with raw_connection(db) as other:
        other.execute("UPDATE tasks SET recurrence = 'garbage' WHERE id = ?", (bad.id,))

    engine = Engine()
    recovery = recover(repository, engine, T0)
    # A start reads ids and run times only: the bad row is found when it is read.
    assert recovery.task_count == 2 and engine.deferred_count == 2
    events = engine.hydrate()

    [dropped] = events
    assert isinstance(dropped, TaskDropped)
    assert dropped.task_id == bad.id and "schedule is not valid" in dropped.reason
    assert [entry.task_id for entry in repository.quarantined()] == [bad.id]
    assert good.id in engine and bad.id not in engine and len(engine) == 1
    assert engine.next_deadline() == good.first_run_at


def test_recovery_quarantines_a_bad_running_row_at_once(
    db: Path, open_repository: OpenRepository
) -> None:
    """A task stored as running is loaded whole (it goes to its retry policy)."""
    repository = open_repository()
    [good, bad] = repository.add_tasks([make_spec(0), make_spec(0)], T0)
    with raw_connection(db) as other:
        other.execute(
            "UPDATE tasks SET state = 'running', recurrence = 'garbage' WHERE id = ?", (bad.id,)
        )

    engine = Engine()
    recovery = recover(repository, engine, T0)

    assert [entry.task_id for entry in recovery.quarantined] == [bad.id]
    assert recovery.task_count == 1
    assert good.id in engine and bad.id not in engine


def test_history_limit_holds_across_a_reopen(db: Path, open_repository: OpenRepository) -> None:
    """A repository counts kept runs per task from a first look: one reopened on a
    file with history must count what is already there, not start from zero."""
    first = open_repository(history_limit=3)
    driver = Driver(first)
    task_id = driver.add_one(make_spec(0, recurrence=Every(timedelta(seconds=10))))

    def run_once(driver: Driver, index: int) -> None:
        [ticket] = driver.due(at(10 * index))
        driver.finish(ticket, RunOutcome.SUCCEEDED, at(10 * index + 1), RunResult(exit_code=index))

    for index in range(2):
        run_once(driver, index)
    first.close()
    second = open_repository(history_limit=3)
    reloaded = Driver(second)
    recover(second, reloaded.engine, at(15))
    for index in range(2, 6):
        run_once(reloaded, index)
        with raw_connection(db) as other:  # never more than the limit, at any point
            assert other.execute("SELECT count(*) FROM runs").fetchone() == (min(index + 1, 3),)

    assert [run.exit_code for run in second.runs(task_id)] == [5, 4, 3]


# ----------------------------------------------------------------------- lock

LOCK_CHILD = """
import json, sys
from pathlib import Path
from taskgui.store.errors import SchedulerAlreadyRunningError
from taskgui.store.sqlite.lock import SchedulerLock, is_locked
database = Path(sys.argv[1])
report = {"locked": is_locked(database)}
lock = SchedulerLock(database)
try:
    lock.acquire()
except SchedulerAlreadyRunningError as error:
    report.update(error=str(error), pid=error.pid, environment=error.environment)
else:
    report["acquired"] = True
    lock.release()
print(json.dumps(report))
"""

HOLDING_CHILD = """
import sys
from pathlib import Path
from taskgui.store.sqlite.lock import SchedulerLock
lock = SchedulerLock(Path(sys.argv[1]))
lock.acquire()
print("locked", flush=True)
sys.stdin.read()  # hold it until killed
"""


def test_a_second_process_cannot_take_the_scheduler_lock(db: Path) -> None:
    lock = SchedulerLock(db)
    lock.acquire()
    try:
        assert lock.held and is_locked(db)
        report = child_report(LOCK_CHILD, str(db))
    finally:
        lock.release()

    assert report["locked"] is True
    assert "acquired" not in report
    assert report["pid"] == os.getpid()
    assert f"process {os.getpid()}" in report["error"]
    assert str(db) in report["error"]
    assert report["environment"] is True


def test_the_lock_can_be_taken_once_it_is_released(db: Path) -> None:
    with SchedulerLock(db) as lock:
        assert holder_pid(lock.path) == os.getpid()
    assert not lock.held
    assert not is_locked(db)
    assert holder_pid(lock_path_for(db)) is None  # the pid is wiped on release

    report = child_report(LOCK_CHILD, str(db))

    assert report == {"locked": False, "acquired": True}


def test_the_lock_dies_with_a_sigkilled_holder(db: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDING_CHILD, str(db)],
        cwd=ROOT,
        env=CHILD_ENV,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline().strip() == "locked"
        assert is_locked(db)
        lock = SchedulerLock(db)
        with pytest.raises(SchedulerAlreadyRunningError) as caught:
            lock.acquire()
        assert caught.value.pid == holder.pid
        assert str(holder.pid) in str(caught.value)
    finally:
        holder.send_signal(signal.SIGKILL)
        holder.communicate(timeout=30)
    assert holder.returncode == -signal.SIGKILL

    lock.acquire()
    try:
        assert lock.held and holder_pid(lock.path) == os.getpid()
    finally:
        lock.release()


def test_the_lock_also_excludes_a_second_holder_in_this_process(db: Path) -> None:
    with SchedulerLock(db) as first:
        first.acquire()  # taking it again is harmless
        with pytest.raises(SchedulerAlreadyRunningError):
            SchedulerLock(db).acquire()
    assert not is_locked(db)
    assert not is_locked(db.with_name("never-locked.sqlite3"))


# ----------------------------------------------------------------------- paths


def test_an_explicit_path_beats_the_environment(tmp_path: Path) -> None:
    environ = {ENV_VAR: str(tmp_path / "from-env.sqlite3")}
    assert resolve_database_path(tmp_path / "given.sqlite3", environ) == (
        tmp_path / "given.sqlite3"
    )
    assert resolve_database_path(str(tmp_path / "given.sqlite3"), environ) == (
        tmp_path / "given.sqlite3"
    )


def test_the_environment_beats_the_default(tmp_path: Path) -> None:
    environ = {ENV_VAR: f"  {tmp_path / 'from-env.sqlite3'}  "}
    assert resolve_database_path(None, environ) == tmp_path / "from-env.sqlite3"
    assert resolve_database_path("", environ) == tmp_path / "from-env.sqlite3"


def test_the_default_is_in_the_user_data_folder() -> None:
    expected = Path(platformdirs.user_data_dir("taskgui", appauthor=False)) / DB_FILENAME
    assert resolve_database_path(None, {}) == expected
    assert resolve_database_path(None, {ENV_VAR: "   "}) == expected
    assert resolve_database_path(None, {"OTHER": "x.sqlite3"}) == expected


def test_a_home_relative_path_is_expanded() -> None:
    home = Path.home()
    assert resolve_database_path("~/a.sqlite3", {}) == home / "a.sqlite3"
    assert resolve_database_path(None, {ENV_VAR: "~/b.sqlite3"}) == home / "b.sqlite3"
