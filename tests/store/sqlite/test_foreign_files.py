"""Another program's SQLite file is refused untouched; taskgui's own files are marked.

Each file here is a real SQLite database written the way another program would, and
"untouched" is checked byte for byte, with its mode, journal mode and the folder's
listing (no -wal, -shm or .lock left beside it).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest

from taskgui.store.errors import DatabaseCorruptError, ForeignDatabaseError, StoreError
from taskgui.store.sqlite.opening import open_sqlite
from taskgui.store.sqlite.repository import SqliteRepository
from taskgui.store.sqlite.schema import APPLICATION_ID, MARKED_FROM, SCHEMA_VERSION, migrate
from tests.helpers.factories import T0, make_spec
from tests.helpers.filesystem import folder_state, taskgui
from tests.helpers.store import open_descriptors, raw_connection

GEOPACKAGE = 0x47504B47  # another program's registered application_id ("GPKG")


def _notes_app(connection: sqlite3.Connection) -> None:
    connection.execute("CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT)")
    connection.execute("INSERT INTO notes (body) VALUES ('my notes')")


def _geopackage(connection: sqlite3.Connection) -> None:
    connection.execute(f"PRAGMA application_id = {GEOPACKAGE}")
    connection.execute("CREATE TABLE gpkg_contents (table_name TEXT)")


def _in_wal_mode(connection: sqlite3.Connection) -> None:
    connection.execute("PRAGMA journal_mode = WAL")
    _notes_app(connection)


def _versioned(connection: sqlite3.Connection) -> None:
    """A program that versions its schema with user_version, as taskgui did."""
    _notes_app(connection)
    connection.execute("PRAGMA user_version = 3")


def _other_tasks_app(connection: sqlite3.Connection) -> None:
    """A to-do program with tables named like taskgui's, and other columns."""
    connection.execute("CREATE TABLE tasks (id INTEGER PRIMARY KEY, title TEXT, done INTEGER)")
    connection.execute("CREATE TABLE runs (id INTEGER PRIMARY KEY, note TEXT)")
    connection.execute("PRAGMA user_version = 2")


def _only_marked_by_another(connection: sqlite3.Connection) -> None:
    """No tables yet, but claimed by another program."""
    connection.execute(f"PRAGMA application_id = {GEOPACKAGE}")


def _newer_than_the_mark(connection: sqlite3.Connection) -> None:
    """Unmarked at a version where taskgui's files are always marked."""
    _notes_app(connection)
    connection.execute(f"PRAGMA user_version = {MARKED_FROM}")


FOREIGN: dict[str, Callable[[sqlite3.Connection], None]] = {
    "notes": _notes_app,
    "geopackage": _geopackage,
    "wal-mode": _in_wal_mode,
    "user-version": _versioned,
    "tasks-and-runs": _other_tasks_app,
    "marked-empty": _only_marked_by_another,
    "unmarked-newer": _newer_than_the_mark,
}


@pytest.fixture(params=list(FOREIGN), ids=list(FOREIGN))
def foreign(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o755)
    path = folder / "theirs.sqlite3"
    with raw_connection(path) as connection:
        FOREIGN[request.param](connection)
    path.chmod(0o644)
    return path


def test_another_programs_database_is_refused_untouched(foreign: Path) -> None:
    with raw_connection(foreign) as connection:
        journal = connection.execute("PRAGMA journal_mode").fetchone()
    before = folder_state(foreign.parent)

    with pytest.raises(ForeignDatabaseError) as caught:
        SqliteRepository(foreign)

    message = str(caught.value)
    assert str(foreign) in message and "another program's" in message
    assert "untouched" in message and "--db" in message
    assert caught.value.environment and caught.value.path == foreign
    assert folder_state(foreign.parent) == before  # bytes, mode 0644, no -wal/-shm/.lock
    with raw_connection(foreign) as connection:
        assert connection.execute("PRAGMA journal_mode").fetchone() == journal
    assert open_descriptors(foreign) == []


def test_reset_corrupt_never_moves_another_programs_database(foreign: Path) -> None:
    before = folder_state(foreign.parent)

    with pytest.raises(ForeignDatabaseError):
        open_sqlite(foreign, T0, reset_corrupt=True)

    assert folder_state(foreign.parent) == before


def test_a_foreign_database_is_not_called_damaged(foreign: Path) -> None:
    with pytest.raises(StoreError) as caught:
        SqliteRepository(foreign)
    assert not isinstance(caught.value, DatabaseCorruptError)
    assert "--reset-corrupt" not in str(caught.value)


@pytest.mark.parametrize("command", [["list"], ["add", "--name", "x", "--command", "true"]])
def test_the_cli_refuses_another_programs_database_in_one_line(
    foreign: Path, tmp_path: Path, command: list[str]
) -> None:
    before = folder_state(foreign.parent)

    result = taskgui("--db", str(foreign), *command, home=tmp_path / "home")

    assert result.returncode == 1
    assert result.stdout == ""
    assert result.stderr.startswith("taskgui: error: ") and result.stderr.count("\n") == 1
    assert "another program's SQLite database" in result.stderr
    assert folder_state(foreign.parent) == before


def test_the_daemon_refuses_it_and_leaves_no_lock_file_beside_it(
    foreign: Path, tmp_path: Path
) -> None:
    """The daemon locks before it opens (a first start needs the folder first): the
    lock file it made beside another program's file goes again (outside trial)."""
    before = folder_state(foreign.parent)

    result = taskgui("--db", str(foreign), "daemon", home=tmp_path / "home")

    assert result.returncode == 1
    assert result.stderr.splitlines()[-1].startswith("taskgui: error: ")
    assert "another program's SQLite database" in result.stderr
    assert folder_state(foreign.parent) == before  # no theirs.sqlite3.lock


# ------------------------------------------------------------------ our own files


def _application_id(path: Path) -> int:
    with raw_connection(path) as connection:
        return int(connection.execute("PRAGMA application_id").fetchone()[0])


def test_a_new_database_is_marked_as_taskguis(tmp_path: Path) -> None:
    path = tmp_path / "new.sqlite3"
    SqliteRepository(path).close()
    assert _application_id(path) == APPLICATION_ID
    assert path.read_bytes()[68:72] == b"TGUI"  # what file(1) and a hex dump show


def test_an_empty_file_is_a_new_database(tmp_path: Path) -> None:
    path = tmp_path / "touched.sqlite3"
    path.touch()
    SqliteRepository(path).close()
    assert _application_id(path) == APPLICATION_ID


@pytest.mark.parametrize("version", range(1, MARKED_FROM))
def test_a_taskgui_file_from_before_the_mark_is_opened_and_marked(
    tmp_path: Path, version: int
) -> None:
    path = tmp_path / f"v{version}.sqlite3"
    with raw_connection(path) as connection:
        migrate(connection, path, target=version)
    first = SqliteRepository(path)
    first.add_tasks([make_spec(0, name="kept")], T0)
    first.close()

    assert _application_id(path) == APPLICATION_ID
    with raw_connection(path) as connection:
        assert connection.execute("PRAGMA user_version").fetchone() == (SCHEMA_VERSION,)
    again = SqliteRepository(path)
    try:
        assert [task.spec.name for task in again.list_tasks()] == ["kept"]
    finally:
        again.close()
