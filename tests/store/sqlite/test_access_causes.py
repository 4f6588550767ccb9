"""A database that cannot be written is reported with its real cause and remedy.

Real conditions, through the real program: a read-only folder (the child runs as
``nobody`` when the tests run as root, since root ignores file modes), a read-only
file, a file system mounted read-only (``unshare -rm`` and a read-only bind mount,
no privilege needed; skipped where user namespaces are off), and a WAL database whose
``-wal`` is missing where it cannot be created again.
"""

from __future__ import annotations

import os
import pwd
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from taskgui.store.sqlite.repository import SqliteRepository
from tests.helpers.factories import T0, make_spec
from tests.helpers.filesystem import (
    NOBODY,
    ROOT,
    folder_state,
    read_only_mount,
    shared_folder,
    taskgui,
    unprivileged,
)

ADD = ("add", "--name", "x", "--command", "true")
ROOT_NAME = pwd.getpwuid(0).pw_name


def _make_database(path: Path) -> None:
    """A closed taskgui database with one task: in WAL mode, with no -wal beside it."""
    repository = SqliteRepository(path)
    repository.add_tasks([make_spec(0)], T0)
    repository.close()
    assert not path.with_name(path.name + "-wal").exists()


def _hand_to_child(*paths: Path) -> None:
    """The unprivileged child must own what the test made, as a real user would."""
    if os.geteuid() == 0:
        for path in paths:
            os.chown(path, NOBODY, NOBODY)


def _error(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 1, result
    assert result.stderr.startswith("taskgui: error: ") and result.stderr.count("\n") == 1
    return result.stderr


@pytest.fixture
def folder() -> Iterator[Path]:
    with shared_folder() as made:
        yield made


@pytest.fixture
def home(folder: Path) -> Path:
    home = folder / "home"
    home.mkdir()
    _hand_to_child(home)
    return home


def _folder_remedy(data: Path) -> str:
    """What the message must advise for the test's read-only folder: chmod where the
    child owns it (the tests run unprivileged), else whose it is (as root: root's, and
    ``chmod u+w`` would fail for the child)."""
    if os.geteuid() == 0:
        return f"make the folder writable (it belongs to the user {ROOT_NAME}, so only"
    return f"chmod u+w {data}"


def _in_read_only_folder(folder: Path) -> Path:
    """A writable taskgui database (the child's own) in a folder the child cannot write."""
    data = folder / "data"
    data.mkdir()
    db = data / "tasks.sqlite3"
    _make_database(db)
    _hand_to_child(db)  # the folder stays the test's: taskgui opens up a folder of its own
    data.chmod(0o555)  # the file itself stays writable: chmod on it would not help
    return db


def test_a_read_only_folder_is_named_not_the_file(folder: Path, home: Path) -> None:
    db = _in_read_only_folder(folder)
    data = db.parent
    before = folder_state(data)

    for command in (("list",), ADD):
        message = _error(taskgui(*unprivileged(), "--db", str(db), *command, home=home))

        assert f"the folder of {db} is not writable" in message
        assert _folder_remedy(data) in message
        assert f"chmod u+w {db}" not in message
        assert "tasks.sqlite3-wal is missing" in message  # why even 'list' fails
    assert folder_state(data) == before


def test_a_new_database_in_a_read_only_folder_names_the_folder(folder: Path, home: Path) -> None:
    data = folder / "data"
    data.mkdir(mode=0o555)
    data.chmod(0o555)
    db = data / "new.sqlite3"

    message = _error(taskgui(*unprivileged(), "--db", str(db), *ADD, home=home))

    assert f"the folder of {db} is not writable" in message
    assert _folder_remedy(data) in message
    assert list(data.iterdir()) == []


def test_a_read_only_file_in_a_writable_folder_names_the_file(folder: Path, home: Path) -> None:
    data = folder / "data"
    data.mkdir()
    db = data / "tasks.sqlite3"
    _make_database(db)
    _hand_to_child(db, data)
    db.chmod(0o444)

    message = _error(taskgui(*unprivileged(), "--db", str(db), *ADD, home=home))

    assert f"{db} is read-only; make it writable (chmod u+w {db})" in message


def test_the_daemon_names_a_read_only_folder_for_its_lock(folder: Path, home: Path) -> None:
    db = _in_read_only_folder(folder)
    data = db.parent

    message = _error(taskgui(*unprivileged(), "--db", str(db), "daemon", home=home))

    assert _folder_remedy(data) in message and "tasks.sqlite3.lock" in message
    assert not (data / "tasks.sqlite3.lock").exists()


# -------------------------------------------------------------- read-only mounts


def test_a_read_only_mount_is_named_with_its_missing_wal(tmp_path: Path) -> None:
    mounted = tmp_path / "mounted"
    mounted.mkdir()
    db = mounted / "tasks.sqlite3"
    _make_database(db)
    prefix = read_only_mount(mounted)
    before = folder_state(mounted)

    for command in (("list",), ADD):
        message = _error(taskgui("--db", str(db), *command, home=tmp_path, prefix=prefix))

        assert f"{db} is on a file system mounted read-only" in message
        assert "tasks.sqlite3-wal is missing" in message
        assert "remount it read-write" in message
        assert "check the folder exists" not in message and "chmod" not in message
    assert folder_state(mounted) == before


def test_a_new_database_on_a_read_only_mount_names_the_mount(tmp_path: Path) -> None:
    mounted = tmp_path / "mounted"
    mounted.mkdir()
    db = mounted / "new.sqlite3"
    prefix = read_only_mount(mounted)

    message = _error(taskgui("--db", str(db), *ADD, home=tmp_path, prefix=prefix))

    assert f"{db} is on a file system mounted read-only" in message
    assert "chmod" not in message
    assert list(mounted.iterdir()) == []


# ------------------------------------------------------------------ a first start


@pytest.mark.slow
def test_a_first_daemon_creates_its_private_folder_before_locking(tmp_path: Path) -> None:
    """It used to lock before anything made the folder, and failed on a first start.

    The default database's folder (a --db folder that does not exist is refused)."""
    data = tmp_path / "new" / "place"
    db = data / "taskgui" / "taskgui.sqlite3"
    environ = {
        **os.environ,
        "HOME": str(tmp_path),
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_DATA_HOME": str(data),
        "PYTHONPATH": str(ROOT),
    }
    environ.pop("TASKGUI_DB", None)
    log = tmp_path / "daemon.log"
    with log.open("wb") as output:
        daemon = subprocess.Popen(
            [sys.executable, "-m", "taskgui", "daemon"],
            cwd=ROOT,
            env=environ,
            stderr=output,
        )
    try:
        deadline = time.monotonic() + 30
        while "taskgui daemon (pid" not in log.read_text() and time.monotonic() < deadline:
            assert daemon.poll() is None, log.read_text()
            time.sleep(0.05)
    finally:
        daemon.send_signal(signal.SIGTERM)
        daemon.wait(timeout=30)
    assert daemon.returncode == 0, log.read_text()
    assert db.is_file()
    assert db.parent.stat().st_mode & 0o777 == 0o700


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to make a file another user's")
def test_another_users_read_only_file_names_its_owner_not_chmod(folder: Path, home: Path) -> None:
    """``chmod u+w`` cannot work on a file that is not yours: say whose it is."""
    data = folder / "data"
    data.mkdir()
    db = data / "tasks.sqlite3"
    _make_database(db)  # root's, mode 0644: nobody may read it but not write it
    _hand_to_child(data)

    message = _error(taskgui(*unprivileged(), "--db", str(db), *ADD, home=home))

    assert f"{db} is read-only; make it writable (it belongs to the user {ROOT_NAME}" in message
    assert "chmod u+w" not in message
