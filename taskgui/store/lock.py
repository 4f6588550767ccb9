"""One scheduler per database file: an advisory lock next to the file.

Two processes that both dispatched from one database would run every task twice. The
lock is ``flock`` on ``<db>.lock``, which the kernel releases when the process dies,
even by SIGKILL, so a crash never leaves a stale lock behind. The holder's pid is
written into the file so the second process can say who holds it.
"""

from __future__ import annotations

import fcntl
import os
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

from taskgui.store.access import access_error
from taskgui.store.errors import SchedulerAlreadyRunningError, StoreError
from taskgui.store.paths import make_folder


def lock_path_for(database: Path) -> Path:
    return database.with_name(database.name + ".lock")


class SchedulerLock:
    """Held by the one process that runs the schedule of a database."""

    def __init__(self, database: Path) -> None:
        self.database = database
        self.path = lock_path_for(database)
        self._fd: int | None = None

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
            make_folder(self.database)  # a first start locks before it opens anything
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
    try:
        text = lock_file.read_text().strip()
    except OSError:
        return None
    return int(text) if text.isdigit() else None


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
