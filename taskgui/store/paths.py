"""Where the database lives, and making its home private.

Default: ``platformdirs.user_data_dir("taskgui")/taskgui.sqlite3``. ``--db PATH`` (passed
in by the front ends) wins over ``TASKGUI_DB``, which wins over the default. The folder
is 0700 and the file 0600: commands and environment values may hold secrets.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path

import platformdirs

from taskgui.store.errors import DatabaseFolderMissingError, DatabasePathError
from taskgui.store.postgres.connection import is_dsn
from taskgui.store.private_folders import make_database_folder

DB_FILENAME = "taskgui.sqlite3"
ENV_VAR = "TASKGUI_DB"


def default_database_path() -> Path:
    return Path(platformdirs.user_data_dir("taskgui", appauthor=False)) / DB_FILENAME


def resolve_database_path(
    explicit: str | os.PathLike[str] | None = None, environ: Mapping[str, str] | None = None
) -> Path:
    """The database path to use: the explicit one, else $TASKGUI_DB, else the default."""
    if explicit:
        return Path(explicit).expanduser()
    env_value = (os.environ if environ is None else environ).get(ENV_VAR, "").strip()
    if env_value:
        return Path(env_value).expanduser()
    return default_database_path()


def refuse_missing_folder(database: Path, given: str = "--db") -> None:
    """DatabaseFolderMissingError, naming the folder, when ``database``'s does not exist.

    For a database named by hand (``given``: "--db" or "$TASKGUI_DB"): a typo in its
    folder ("/typo/dir/x.sqlite3") would otherwise be made, folders and all, and a
    schedule started where nobody looks for it. The default database's folders are
    made (``private_folders``): a new account has none of them.
    """
    folder = database.parent
    try:
        folder.lstat()  # a link that leads nowhere is there: opening says what is wrong
    except FileNotFoundError:
        raise DatabaseFolderMissingError(
            f"the folder {folder} does not exist, so the database {database} cannot be made "
            f"there; create the folder first, or correct the path given with {given}",
            database,
        ) from None
    except OSError:
        return  # a file on the way, a folder above it not ours to read: opening says so


def shared_dsn(explicit: str | None, environ: Mapping[str, str] | None = None) -> str | None:
    """The DSN when ``--db`` (else $TASKGUI_DB) names a PostgreSQL database, else None.

    Here beside ``resolve_database_path``, the other half of the same question, so
    that a start can ask it without importing the command line or the driver.
    """
    value = explicit if explicit else (os.environ if environ is None else environ).get(ENV_VAR, "")
    value = value.strip()
    return value if is_dsn(value) else None


def prepare_private_file(path: Path) -> None:
    """Create the folder (see ``private_folders``) and the file (0600) if missing.

    An existing file is left as it is here: only once SQLite
    has read it as a database this taskgui may open does ``tighten_private_file``
    make it private (a text file given by mistake, or a newer taskgui's database, is
    refused untouched). A path that names a folder or a device is refused before
    anything is touched.
    """
    make_database_folder(path)
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        fd = os.open(path, os.O_CREAT | os.O_WRONLY, 0o600)
        os.close(fd)
        return
    if stat.S_ISDIR(mode):
        raise DatabasePathError(
            f"{path} is a folder, not a database file; give a file path such as "
            f"{path / DB_FILENAME}",
            path,
        )
    if not stat.S_ISREG(mode):
        raise DatabasePathError(
            f"{path} is not a regular file (a device, pipe or socket?); give the path of a "
            f"database file, such as {path.parent / DB_FILENAME}",
            path,
        )


def tighten_private_file(path: Path) -> None:
    """Make an existing database file 0600, when it is ours to tighten (we can write it).

    Call it only for a file that has opened as a database this taskgui may use, and
    before switching it to WAL: SQLite gives the -wal and -shm files the database
    file's mode.
    """
    try:
        mode = path.stat().st_mode
        if stat.S_ISREG(mode) and mode & 0o077 and os.access(path, os.W_OK):
            path.chmod(0o600)
    except PermissionError:
        pass  # writable but another user's: not ours to change


def free_name_beside(path: Path, label: str, now: datetime) -> Path:
    """``<name>.<label>-<time>`` beside ``path``, numbered on until the name is free."""
    stamp = now.strftime("%Y%m%dT%H%M%S")
    target = path.with_name(f"{path.name}.{label}-{stamp}")
    counter = 1
    while target.exists():
        counter += 1
        target = path.with_name(f"{path.name}.{label}-{stamp}-{counter}")
    return target
