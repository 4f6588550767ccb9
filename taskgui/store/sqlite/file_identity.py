"""Is the file at the database's path still the one this process has open?

SQLite keeps writing to the files it opened, by descriptor. If the database is
deleted or replaced under a running scheduler (``rm``, a restore, a sync tool's
rename), it goes on with an inode nobody can open again, while the CLI makes a fresh
file at the path whose tasks never run. If the ``-wal`` (or ``-shm``) is deleted, the
latest commits live only in the open, unlinked log, and the next process to open the
path starts a second log beside it: commits lost, and the file left damaged.

So the files are identified by device and inode when opened, and compared with what
the path holds: the database on every wake of the scheduler (one ``stat``), its
companions too on the regular request check. The lock file carries the same identities
(``SchedulerLock.record_files``), so that a CLI started meanwhile can tell that the
scheduler holds a file the path no longer names, and refuse before it creates or
writes anything. Once the loss is noticed, ``save_open_database`` keeps what the open
connection still reads, and the scheduler writes nothing more.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from taskgui.store.errors import DatabaseReplacedError
from taskgui.store.paths import free_name_beside

COMPANIONS = ("-wal", "-shm")


@dataclass(frozen=True, slots=True)
class FileId:
    device: int
    inode: int

    def __str__(self) -> str:
        return f"{self.device}:{self.inode}"

    @classmethod
    def parse(cls, text: str) -> FileId | None:
        device, _, inode = text.partition(":")
        if not (device.isdigit() and inode.isdigit()):
            return None
        return cls(int(device), int(inode))


def file_id(path: Path) -> FileId | None:
    """The identity of what ``path`` names now; None when nothing is there."""
    try:
        status = os.stat(path)
    except (FileNotFoundError, NotADirectoryError):
        return None
    return FileId(status.st_dev, status.st_ino)


def companion(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


@dataclass(frozen=True, slots=True)
class OpenFiles:
    """The database and its companions (None: not there when opened) as opened."""

    path: Path
    database: FileId
    wal: FileId | None
    shm: FileId | None

    @classmethod
    def of(cls, path: Path) -> OpenFiles:
        """Call right after opening, while this process holds them open."""
        database = file_id(path)
        if database is None:
            raise DatabaseReplacedError(_gone(path), path)
        return cls(
            path, database, file_id(companion(path, "-wal")), file_id(companion(path, "-shm"))
        )

    def encode(self) -> str:
        return " ".join(str(part) if part else "-" for part in (self.database, self.wal, self.shm))

    @classmethod
    def decode(cls, path: Path, text: str) -> OpenFiles | None:
        parts = text.split()
        if len(parts) != 3:
            return None
        database, wal, shm = (None if part == "-" else FileId.parse(part) for part in parts)
        if database is None:
            return None
        return cls(path, database, wal, shm)

    def verify(self, *, companions: bool = True) -> None:
        """Raise DatabaseReplacedError if the path no longer names these files."""
        problem = self.problem(companions=companions)
        if problem is not None:
            raise DatabaseReplacedError(problem, self.path)

    def problem(self, *, companions: bool = True) -> str | None:
        """What happened to the files at the path, in words; None when all is well."""
        now = file_id(self.path)
        if now != self.database:
            return _gone(self.path) if now is None else _replaced(self.path)
        if not companions:
            return None
        for suffix, opened in zip(COMPANIONS, (self.wal, self.shm), strict=True):
            if opened is None:
                continue  # not in WAL mode when opened (a read-only file)
            side = companion(self.path, suffix)
            found = file_id(side)
            if found != opened:
                what = "deleted" if found is None else "replaced by another file"
                return (
                    f"{side}, the write-ahead {'log' if suffix == '-wal' else 'index'} "
                    f"of {self.path}, was {what} while taskgui had it open"
                )
        return None


def _gone(path: Path) -> str:
    return f"{path} was deleted while taskgui had it open"


def _replaced(path: Path) -> str:
    return f"{path} was replaced by another file while taskgui had it open"


def save_open_database(connection: sqlite3.Connection, files: OpenFiles, now: datetime) -> str:
    """After the path lost ``files``: keep what ``connection`` still reads.

    If only the -wal or -shm went, the open log is folded into the file the path still
    names, so no commit is lost. If the file itself went, a copy of it is written
    beside the path (never over whatever is there now). Returns what was done, for
    the person.
    """
    path = files.path
    if file_id(path) == files.database:
        try:
            busy = connection.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
        except sqlite3.Error as error:
            return f"its latest changes could not be saved into it ({error})"
        if busy:
            return (
                "its latest changes could not all be saved into it (another program was reading it)"
            )
        return f"every change committed so far is saved in {path}"
    target = free_name_beside(path, "rescued", now)
    try:
        descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        os.close(descriptor)
        with contextlib.closing(sqlite3.connect(target)) as copy:
            connection.backup(copy)
        kept = f"a copy of the schedule it held was saved as {target}"
    except (OSError, sqlite3.Error) as error:
        kept = f"no copy of what it held could be saved ({error})"
    # Our -wal is still at the path: emptied now, or SQLite would read it into
    # whatever file is put there (a restored backup would come back as this one).
    with contextlib.suppress(sqlite3.Error):
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return kept
