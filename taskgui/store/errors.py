"""Store errors: each says whether the environment or taskgui is at fault, and what to do.

A person reads these (a CLI line, a GUI dialog), so every message names the database
file and the next step. ``environment`` is True for problems outside taskgui's control
(a corrupt or read-only file, a full disk, a lock held by another process).
"""

from __future__ import annotations

from pathlib import Path

from taskgui.core.errors import TaskguiError


class StoreError(TaskguiError):
    """Something went wrong with the database."""

    environment = False
    # The store cannot be reached just now (a server, its network): a follower says
    # "lost the connection" and retries. Not a refused permission or a bad row.
    unreachable = False

    def __init__(self, message: str, path: Path | None = None, *, reason: str = "") -> None:
        super().__init__(message)
        self.path = path
        # What went wrong without where: for a notice that names the place itself (the
        # window's "Lost the connection to ... at HOST/DB: <reason>").
        self.reason = reason or message


class DatabaseCorruptError(StoreError):
    """The file is not a readable taskgui database."""

    environment = True


class DatabaseReadOnlyError(StoreError):
    environment = True


class DiskFullError(StoreError):
    environment = True


class DatabaseLockedError(StoreError):
    """Another process held the database's write lock for longer than the busy timeout."""

    environment = True


class DatabasePathError(StoreError):
    """The database path names something that is not a database file (a folder, a device)."""

    environment = True


class DatabaseFolderMissingError(DatabasePathError):
    """The folder of a database named by hand (``--db``) does not exist: likely a typo,
    so it is not made (the default database's folders are, on a new account)."""


class ForeignDatabaseError(StoreError):
    """The file is another program's SQLite database: refused before anything is written."""

    environment = True


class DatabaseReplacedError(StoreError):
    """The path no longer names the file this process has open (deleted or replaced).

    Not retried: going on would write where nobody can read it again.
    """

    environment = True


class NewerSchemaError(StoreError):
    """The file was written by a newer taskgui; this one must not touch it."""

    environment = True


class SchedulerAlreadyRunningError(StoreError):
    """Another process is already running the schedule of this database."""

    environment = True

    def __init__(self, message: str, path: Path | None = None, pid: int | None = None) -> None:
        super().__init__(message, path)
        self.pid = pid


class CodecError(StoreError):
    """A stored value could not be decoded (unknown version, malformed JSON, invalid task)."""
