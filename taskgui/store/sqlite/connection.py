"""Opening the database file, and turning SQLite's errors into ones a person can act on.

Nothing is written before SQLite has read the file's header: a file that is not a
database, another program's database, or one from a newer taskgui is refused exactly
as it was found (see ``schema.check_ours``).

Pragmas: WAL (readers never block the scheduler's writes, and a commit is one append),
``synchronous=NORMAL`` (in WAL mode a commit survives a crash of the process; only a
power cut can lose the last few commits, never corrupt the file), foreign keys on,
and a busy timeout so a CLI write and the scheduler wait for each other briefly
instead of failing.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sqlite3
import time
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

from taskgui.store.errors import (
    DatabaseCorruptError,
    DatabaseLockedError,
    DatabaseReadOnlyError,
    DatabaseReplacedError,
    DiskFullError,
    StoreError,
)
from taskgui.store.paths import free_name_beside, prepare_private_file, tighten_private_file
from taskgui.store.sqlite.access import access_error, is_access_errno
from taskgui.store.sqlite.schema import check_ours

BUSY_TIMEOUT_MS = 5_000
# Tries at switching a new file to WAL while another process holds it, and the pause
# between two: together as long as the busy timeout.
WAL_SWITCH_PAUSE = 0.01
WAL_SWITCH_TRIES = int(BUSY_TIMEOUT_MS / 1000 / WAL_SWITCH_PAUSE)


def _switch_to_wal(connection: sqlite3.Connection) -> str:
    """Put the file in WAL mode (a no-op once it is) and return the mode it is in.

    Switching needs the file to itself for a moment, and SQLite does not wait for that
    (no busy handler: "database is locked" at once) when another process is opening
    the same new file (the window, a CLI call, the daemon at log-in). So it is tried
    again, briefly, for as long as the busy timeout lets any other statement wait.
    """
    for _attempt in range(WAL_SWITCH_TRIES):
        try:
            return str(connection.execute("PRAGMA journal_mode = WAL").fetchone()[0])
        except sqlite3.OperationalError as error:
            if "locked" not in str(error).lower():
                raise
            time.sleep(WAL_SWITCH_PAUSE)
    return str(connection.execute("PRAGMA journal_mode = WAL").fetchone()[0])


def connect(path: Path) -> sqlite3.Connection:
    """Open (creating if needed) the database at ``path`` with taskgui's pragmas."""
    with translate_errors(path):
        try:
            prepare_private_file(path)
        except PermissionError:
            if not path.exists():
                raise access_error(path) or DatabaseReadOnlyError(
                    f"cannot create {path}: permission denied; choose a writable "
                    "location with --db or TASKGUI_DB",
                    path,
                ) from None
        connection = sqlite3.connect(
            path, isolation_level=None, check_same_thread=False, timeout=BUSY_TIMEOUT_MS / 1000
        )
        try:
            connection.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            # Read the file before anything writes to it: one that is not a database,
            # another program's or a newer taskgui's, is refused untouched
            # (journal_mode=WAL rewrites the header; the chmod below changes its mode).
            check_ours(connection, path)
            tighten_private_file(path)
            mode = _switch_to_wal(connection)
            if str(mode).lower() != "wal" and _is_writable(path):
                raise StoreError(f"{path}: could not switch to WAL mode (got {mode})", path)
            connection.execute("PRAGMA synchronous = NORMAL")
            connection.execute("PRAGMA foreign_keys = ON")
        except BaseException:
            connection.close()
            raise
        return connection


def _is_writable(path: Path) -> bool:
    return os.access(path, os.W_OK) and os.access(path.parent, os.W_OK)


@contextlib.contextmanager
def translate_errors(path: Path) -> Iterator[None]:
    """Re-raise sqlite3 and OS errors as StoreErrors that say what to do."""
    try:
        yield
    except StoreError:
        raise
    except sqlite3.DatabaseError as error:
        raise classify(error, path) from error
    except OSError as error:
        if error.errno == errno.ENOSPC:
            raise DiskFullError(_disk_full_message(path), path) from error
        if is_access_errno(error.errno):
            raise _read_only_error(path) from error
        raise StoreError(f"{path}: {error.strerror or error}", path) from error


def classify(error: sqlite3.DatabaseError, path: Path) -> StoreError:
    """Map a sqlite3 error to the StoreError a person can act on."""
    name = getattr(error, "sqlite_errorname", "") or ""
    text = str(error)
    if name.startswith("SQLITE_FULL") or "disk is full" in text:
        return DiskFullError(_disk_full_message(path), path)
    if name == "SQLITE_READONLY_DBMOVED":  # (WAL mode would not notice: file_identity)
        return DatabaseReplacedError(
            f"{path} was deleted, moved or replaced while taskgui had it open", path
        )
    if name.startswith("SQLITE_READONLY") or "readonly" in text:
        return _read_only_error(path)
    if name.startswith(("SQLITE_BUSY", "SQLITE_LOCKED")) or "locked" in text:
        return DatabaseLockedError(
            f"{path} is busy: another program kept it locked for over "
            f"{BUSY_TIMEOUT_MS // 1000}s; try again, or close the program holding it",
            path,
        )
    if name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB")) or "not a database" in text:
        return DatabaseCorruptError(
            f"{path} is damaged or is not a taskgui database ({text}); move it aside and "
            "start a fresh one (taskgui --reset-corrupt), or restore it from a backup",
            path,
        )
    if name.startswith(("SQLITE_CANTOPEN", "SQLITE_IOERR")):
        # A read-only folder or mount, or a missing -wal that cannot be made again.
        return access_error(path) or StoreError(f"cannot open {path} ({text})", path)
    return StoreError(f"database error in {path}: {text}", path)


def _disk_full_message(path: Path) -> str:
    return f"the disk holding {path} is full; free some space and try again (nothing was lost)"


def _read_only_error(path: Path) -> StoreError:
    """Named by its real cause (file, folder, mount) where the file system shows it."""
    return access_error(path) or DatabaseReadOnlyError(
        f"{path} is read-only; make it writable (chmod u+w) or choose another file "
        "with --db or TASKGUI_DB",
        path,
    )


def move_aside(path: Path, now: datetime) -> Path:
    """Rename a damaged database (and its WAL files) out of the way; never delete it."""
    target = free_name_beside(path, "corrupt", now)
    path.rename(target)
    for suffix in ("-wal", "-shm"):
        sidecar = path.with_name(path.name + suffix)
        if sidecar.exists():
            sidecar.rename(target.with_name(target.name + suffix))
    return target
