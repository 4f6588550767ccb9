"""One scheduler per database file: an advisory lock next to the file.

Two processes that both dispatched from one database would run every task twice. The
lock is ``flock`` on ``<db>.lock``, which the kernel releases when the process dies,
even by SIGKILL, so a crash never leaves a stale lock behind. The holder's pid is
written into the file so the second process can say who holds it, and, once it has
opened the database, which files it has open (``record_files``): a CLI started while
the holder runs on a file that was deleted or replaced under it then refuses, rather
than create a fresh file and file its request where nobody reads it
(``refuse_if_holder_lost_its_file``).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from taskgui.store.errors import DatabaseReplacedError, SchedulerAlreadyRunningError, StoreError
from taskgui.store.private_folders import make_database_folder
from taskgui.store.sqlite.access import access_error
from taskgui.store.sqlite.file_identity import OpenFiles

_FILES = "files"  # the lock file's line naming the holder's open database files


def lock_path_for(database: Path) -> Path:
    return database.with_name(database.name + ".lock")


class SchedulerLock:
    """Held by the one process that runs the schedule of a database."""

    def __init__(self, database: Path) -> None:
        self.database = database
        self.path = lock_path_for(database)
        self._fd: int | None = None
        self._created = False  # this lock made the lock file (it was not there)

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire_waiting(self, seconds: float, sleep: Callable[[float], None]) -> None:
        """Like ``acquire``, but keep trying for ``seconds``.

        A CLI command holds the lock for a moment while it changes the schedule; a
        scheduler starting at that moment should wait it out, not give up.
        """
        attempts = max(1, int(seconds / 0.05))
        for attempt in range(attempts):
            try:
                self.acquire()
                return
            except SchedulerAlreadyRunningError:
                if attempt == attempts - 1:
                    raise
                sleep(0.05)

    def acquire(self) -> None:
        """Take the lock or raise SchedulerAlreadyRunningError naming the holder."""
        if self._fd is not None:
            return
        try:
            make_database_folder(self.database)  # a first start locks before it opens
            created = not self.path.exists()
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o600)
        except OSError as error:
            raise access_error(self.database) or StoreError(
                f"cannot create the lock file {self.path} ({error.strerror})", self.database
            ) from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = holder_pid(self.path)
            os.close(fd)
            who = f"process {pid}" if pid else "another process"
            raise SchedulerAlreadyRunningError(
                f"{who} is already running the schedule in {self.database}; "
                "use that window or daemon, or stop it first",
                self.database,
                pid,
            ) from None
        os.ftruncate(fd, 0)
        os.write(fd, f"{os.getpid()}\n".encode())
        self._fd = fd
        self._created = created

    def record_files(self, files: OpenFiles) -> None:
        """Say, in the lock file, which database files the holder has open."""
        if self._fd is None:
            return
        # Written over the pid line, then cut to length, never truncated first: a
        # reader between a truncate and the write found no holder (the window that
        # had just handed its schedule to a daemon was told nobody held it).
        record = f"{os.getpid()}\n{_FILES} {files.encode()}\n".encode()
        os.pwrite(self._fd, record, 0)
        os.ftruncate(self._fd, len(record))

    def release_and_remove(self) -> None:
        """Release, and remove the lock file if this lock made it: for a database that
        was refused (another program's), which should not get a taskgui file beside it.

        Unlinked while still held, so nobody can have taken it meanwhile; a lock file
        that was there before is left alone (another taskgui may be waiting on it).
        """
        if self._fd is not None and self._created:
            with contextlib.suppress(OSError):
                self.path.unlink()
        self.release()

    def release(self) -> None:
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        try:
            os.ftruncate(fd, 0)
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)

    def __enter__(self) -> SchedulerLock:
        self.acquire()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.release()


def holder_pid(lock_file: Path) -> int | None:
    """The pid written by the lock's holder, if readable."""
    first = _lock_lines(lock_file)[:1]
    return int(first[0]) if first and first[0].isdigit() else None


def holder_files(database: Path) -> OpenFiles | None:
    """The database files the lock's holder said it has open, if it said so."""
    for line in _lock_lines(lock_path_for(database))[1:]:
        key, _, value = line.partition(" ")
        if key == _FILES:
            return OpenFiles.decode(database, value)
    return None


def refuse_if_holder_lost_its_file(database: Path) -> None:
    """Before opening ``database`` without the lock: refuse, touching nothing, when the
    process running its schedule has files open that the path no longer names.

    Opening would create a fresh file (or a second -wal beside the holder's) and file
    requests that nobody reads; the holder notices within a second and stops.
    """
    files = holder_files(database)
    if files is None:
        return
    problem = files.problem()
    if problem is None or not is_locked(database):
        return
    pid = holder_pid(lock_path_for(database))
    who = f"process {pid}" if pid else "another process"
    raise DatabaseReplacedError(
        f"{problem}; {who} still holds the schedule it had open there, and stops it as "
        "soon as it notices (keeping what it held). Nothing was created or written: "
        "try again once that process has ended (a daemon exits by itself; quit a window)",
        database,
    )


def _lock_lines(lock_file: Path) -> list[str]:
    try:
        return lock_file.read_text().strip().splitlines()
    except (OSError, UnicodeDecodeError):
        return []


def is_locked(database: Path) -> bool:
    """True when some process holds the scheduler lock of ``database``."""
    path = lock_path_for(database)
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return False
    except OSError as error:
        raise StoreError(f"cannot read the lock file {path} ({error.strerror})", database) from None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False
