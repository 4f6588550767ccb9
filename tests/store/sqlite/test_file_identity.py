"""The database path losing the open file (deleted, replaced, its -wal or -shm
deleted): noticed, what the open file holds kept, and a CLI started meanwhile refused.

Real files, a real lock held by this process, and the real CLI in a subprocess.
"""

from __future__ import annotations

import json
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from taskgui.store.errors import DatabaseReplacedError
from taskgui.store.sqlite.connection import classify
from taskgui.store.sqlite.lock import SchedulerLock, holder_files, holder_pid, lock_path_for
from taskgui.store.sqlite.repository import SqliteRepository
from tests.helpers.factories import T0, make_spec
from tests.helpers.filesystem import taskgui
from tests.helpers.store import checkpoint, raw_connection

ADD = ("add", "--name", "late", "--command", "true")


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "data" / "tasks.sqlite3"


@pytest.fixture
def repository(db: Path) -> Iterator[SqliteRepository]:
    repository = SqliteRepository(db)
    repository.add_tasks([make_spec(0, name="first"), make_spec(1, name="second")], T0)
    yield repository
    repository.close()


@pytest.fixture
def holder(db: Path, repository: SqliteRepository) -> Iterator[SchedulerLock]:
    """This process runs the schedule of ``db``, as a daemon would."""
    lock = SchedulerLock(db)
    lock.acquire()
    lock.record_files(repository.files)
    yield lock
    lock.release()


def wal(db: Path) -> Path:
    return db.with_name(db.name + "-wal")


def shm(db: Path) -> Path:
    return db.with_name(db.name + "-shm")


def task_names(path: Path) -> list[str]:
    with raw_connection(path) as connection:
        assert connection.execute("PRAGMA integrity_check").fetchone() == ("ok",)
        return [row[0] for row in connection.execute("SELECT name FROM tasks ORDER BY id")]


def another_database(path: Path) -> Path:
    other = SqliteRepository(path)
    other.add_tasks([make_spec(0, name="theirs")], T0)
    other.close()
    return path


# ------------------------------------------------------------------- noticing


def test_a_healthy_file_passes(repository: SqliteRepository) -> None:
    repository.verify_file()
    repository.verify_file(companions=False)


def test_a_deleted_database_is_noticed(repository: SqliteRepository, db: Path) -> None:
    db.unlink()
    with pytest.raises(DatabaseReplacedError) as caught:
        repository.verify_file(companions=False)  # the one stat of every wake
    assert str(caught.value) == f"{db} was deleted while taskgui had it open"
    assert caught.value.environment and caught.value.path == db


def test_a_replaced_database_is_noticed(
    repository: SqliteRepository, db: Path, tmp_path: Path
) -> None:
    os.replace(another_database(tmp_path / "other.sqlite3"), db)
    with pytest.raises(DatabaseReplacedError) as caught:
        repository.verify_file(companions=False)
    assert str(caught.value) == f"{db} was replaced by another file while taskgui had it open"


@pytest.mark.parametrize("companion", [wal, shm], ids=["wal", "shm"])
def test_a_deleted_companion_is_noticed_by_the_thorough_check(
    repository: SqliteRepository, db: Path, companion: object
) -> None:
    assert callable(companion)
    side: Path = companion(db)
    side.unlink()
    repository.verify_file(companions=False)  # the database itself is still there
    with pytest.raises(DatabaseReplacedError) as caught:
        repository.verify_file()
    assert str(side) in str(caught.value) and "was deleted" in str(caught.value)


# -------------------------------------------------------------------- keeping


def test_a_deleted_database_is_copied_beside_its_path(
    repository: SqliteRepository, db: Path
) -> None:
    db.unlink()

    kept = repository.save_what_is_open(T0)

    (copy,) = db.parent.glob("tasks.sqlite3.rescued-*")
    assert kept == f"a copy of the schedule it held was saved as {copy}"
    assert copy.name == f"tasks.sqlite3.rescued-{T0:%Y%m%dT%H%M%S}"
    assert copy.stat().st_mode & 0o777 == 0o600
    assert task_names(copy) == ["first", "second"]
    assert SqliteRepository(copy).list_tasks()[0].spec.name == "first"  # opens as ours
    assert not db.exists()  # never a new file where the person removed one


def test_a_replaced_database_is_copied_and_the_new_file_left_alone(
    repository: SqliteRepository, db: Path, tmp_path: Path
) -> None:
    os.replace(another_database(tmp_path / "other.sqlite3"), db)
    before = db.read_bytes()

    repository.save_what_is_open(T0)

    (copy,) = db.parent.glob("tasks.sqlite3.rescued-*")
    assert task_names(copy) == ["first", "second"]
    assert db.read_bytes() == before
    # Our log, still at the path, is emptied at once: were this process killed now,
    # SQLite would otherwise read it into the file put there.
    assert wal(db).stat().st_size == 0
    repository.close()
    assert task_names(db) == ["theirs"]


def test_after_a_deleted_wal_every_commit_is_saved_into_the_file(
    repository: SqliteRepository, db: Path
) -> None:
    repository.take_over_checkpoints()  # as the scheduler runs it: commits stay in the log
    repository.add_tasks([make_spec(2, name="just added")], T0)
    wal(db).unlink()

    kept = repository.save_what_is_open(T0)

    assert kept == f"every change committed so far is saved in {db}"
    repository.close()
    assert task_names(db) == ["first", "second", "just added"]


def test_without_saving_a_deleted_wal_loses_the_latest_commits(
    repository: SqliteRepository, db: Path
) -> None:
    """Why the log must be saved: the file alone lacks what only the -wal held."""
    checkpoint(db)  # the first two are in the file itself
    repository.take_over_checkpoints()
    repository.add_tasks([make_spec(2, name="just added")], T0)
    wal(db).unlink()
    copy = db.with_name("copy.sqlite3")
    copy.write_bytes(db.read_bytes())  # what a process opening the path now would see

    assert task_names(copy) == ["first", "second"]


# ---------------------------------------------------- a CLI started meanwhile


def test_the_lock_names_the_holders_files(
    holder: SchedulerLock, repository: SqliteRepository, db: Path
) -> None:
    assert holder_pid(lock_path_for(db)) == os.getpid()
    assert holder_files(db) == repository.files


def test_a_cli_refuses_while_the_scheduler_runs_a_deleted_file(
    holder: SchedulerLock, db: Path, tmp_path: Path
) -> None:
    db.unlink()

    for command in (ADD, ("list",), ("cancel", "1")):
        result = taskgui("--db", str(db), *command, home=tmp_path / "home")

        assert result.returncode == 1, result
        message = result.stderr
        assert message.startswith("taskgui: error: ") and message.count("\n") == 1
        assert f"{db} was deleted while taskgui had it open" in message
        assert f"process {os.getpid()} still holds the schedule" in message
        assert "Nothing was created or written" in message
        assert not db.exists()  # no fresh file, no request filed where nobody reads it
    assert sorted(path.name for path in db.parent.iterdir()) == [
        "tasks.sqlite3-shm",
        "tasks.sqlite3-wal",
        "tasks.sqlite3.lock",
    ]


def test_a_cli_refuses_while_the_scheduler_runs_a_replaced_file(
    holder: SchedulerLock, db: Path, tmp_path: Path
) -> None:
    os.replace(another_database(tmp_path / "other.sqlite3"), db)
    before = db.read_bytes()

    result = taskgui("--db", str(db), *ADD, home=tmp_path / "home")

    assert result.returncode == 1
    assert "was replaced by another file" in result.stderr
    # Not opened here either: the holder's -wal beside it would be read into it.
    assert db.read_bytes() == before


def test_a_cli_refuses_while_the_schedulers_wal_is_missing(
    holder: SchedulerLock, db: Path, tmp_path: Path
) -> None:
    wal(db).unlink()

    result = taskgui("--db", str(db), *ADD, home=tmp_path / "home")

    assert result.returncode == 1
    assert f"{wal(db)}, the write-ahead log of {db}, was deleted" in result.stderr
    assert not wal(db).exists()  # a second log beside the holder's would damage the file


def test_a_cli_works_as_usual_while_the_files_are_the_holders(
    holder: SchedulerLock, db: Path, tmp_path: Path
) -> None:
    result = taskgui("--db", str(db), "list", "--json", home=tmp_path / "home")
    assert result.returncode == 0, result.stderr
    assert len(json.loads(result.stdout)) == 2


def test_a_stale_record_of_a_dead_holder_is_ignored(
    repository: SqliteRepository, db: Path, tmp_path: Path
) -> None:
    lock = SchedulerLock(db)
    lock.acquire()
    lock.record_files(repository.files)
    # A holder killed by SIGKILL leaves its record; the kernel drops its flock.
    record = lock_path_for(db).read_text()
    lock.release()
    lock_path_for(db).write_text(record)
    repository.close()
    db.unlink()
    for suffix in ("-wal", "-shm"):
        db.with_name(db.name + suffix).unlink(missing_ok=True)

    result = taskgui("--db", str(db), *ADD, home=tmp_path / "home")

    assert result.returncode == 0, result.stderr
    assert task_names(db) == ["late"]


def test_sqlite_in_wal_mode_keeps_writing_to_a_deleted_file(db: Path) -> None:
    """The fault in SQLite's own terms: no error, every write goes to the lost inode
    (in rollback mode SQLite would refuse with SQLITE_READONLY_DBMOVED, below)."""
    db.parent.mkdir()
    connection = sqlite3.connect(db, isolation_level=None)
    try:
        connection.execute("PRAGMA journal_mode = WAL")
        connection.execute("CREATE TABLE t (x)")
        db.unlink()
        connection.execute("INSERT INTO t VALUES (1)")
        assert connection.execute("SELECT count(*) FROM t").fetchone() == (1,)
    finally:
        connection.close()
    assert not db.exists()


def test_sqlites_own_moved_file_error_is_named_as_such(db: Path) -> None:
    """A file that could not be switched to WAL (rollback mode): SQLite notices."""
    db.parent.mkdir()
    connection = sqlite3.connect(db, isolation_level=None)
    try:
        connection.execute("CREATE TABLE t (x)")
        db.unlink()
        with pytest.raises(sqlite3.OperationalError) as raised:
            connection.execute("INSERT INTO t VALUES (1)")
    finally:
        connection.close()
    assert raised.value.sqlite_errorname == "SQLITE_READONLY_DBMOVED"

    error = classify(raised.value, db)

    assert isinstance(error, DatabaseReplacedError)
    assert "read-only" not in str(error) and str(db) in str(error)
