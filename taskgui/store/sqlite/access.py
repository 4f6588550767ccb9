"""Why the database cannot be opened or written: the cause a person can act on.

SQLite says "attempt to write a readonly database" or "unable to open database file"
for causes with different remedies. A read-only *file* is fixed by ``chmod u+w`` on
it; a read-only *folder* is not: SQLite must create ``-wal`` and ``-shm`` beside the
file (and taskgui its ``.lock``), so the folder must be writable. A file system
mounted read-only takes a remount, whatever the modes say; and a WAL database whose
``-wal`` is missing cannot even be read where that file cannot be created.
``access_error`` looks at the file system and names the first cause that applies.
"""

from __future__ import annotations

import errno
import os
import pwd
import stat
from pathlib import Path

from taskgui.store.errors import DatabaseReadOnlyError, StoreError

ELSEWHERE = "or choose another location with --db or TASKGUI_DB"
_WAL_MODE = 2  # header bytes 18 and 19 (file format write/read version) in WAL mode


def access_error(path: Path) -> StoreError | None:
    """The StoreError naming why ``path`` cannot be opened or written, if one is seen."""
    folder = path.parent
    try:
        folder_is_dir = stat.S_ISDIR(os.stat(folder).st_mode)
    except (FileNotFoundError, NotADirectoryError):
        folder_is_dir = False
    except OSError as error:  # e.g. a folder above it cannot be entered
        return StoreError(f"cannot reach the folder {folder} ({error.strerror}); {ELSEWHERE}", path)
    if not folder_is_dir:
        return StoreError(
            f"the folder {folder} does not exist (was it moved or removed?); create it, "
            f"{ELSEWHERE}",
            path,
        )
    wal_note = _missing_wal_note(path)
    if _mounted_read_only(folder):
        return DatabaseReadOnlyError(
            f"{path} is on a file system mounted read-only{wal_note}; remount it "
            f"read-write, or copy the database to a writable place and use --db or TASKGUI_DB",
            path,
        )
    if not os.access(folder, os.W_OK | os.X_OK):
        return DatabaseReadOnlyError(
            f"the folder of {path} is not writable, and taskgui must create files beside "
            f"the database there ({path.name}-wal, {path.name}-shm, {path.name}.lock)"
            f"{wal_note}; make the folder writable ({_how_to_make_writable(folder)}) — the "
            "file's own mode does not help — or move the database to a writable folder and "
            "use --db",
            path,
        )
    if path.exists() and not os.access(path, os.W_OK):
        return DatabaseReadOnlyError(
            f"{path} is read-only; make it writable ({_how_to_make_writable(path)}), {ELSEWHERE}",
            path,
        )
    # SQLite gives the -wal and -shm the database's mode, so the file comes first.
    for suffix in ("-wal", "-shm"):
        sidecar = path.with_name(path.name + suffix)
        if sidecar.exists() and not os.access(sidecar, os.R_OK | os.W_OK):
            return DatabaseReadOnlyError(
                f"{sidecar}, SQLite's companion of {path.name}, is read-only or another "
                f"user's; make it writable ({_how_to_make_writable(sidecar)}) or remove it once "
                "no program has the database open",
                path,
            )
    return None


def _how_to_make_writable(target: Path) -> str:
    """The remedy for ``target``: ``chmod u+w`` if it is ours; else whose it is, since
    only its owner (or root) may change its mode."""
    try:
        owner = os.stat(target).st_uid
    except OSError:
        owner = os.getuid()
    if owner == os.getuid():  # the real uid, as os.access checks
        return f"chmod u+w {target}"
    return (
        f"it belongs to {_user_name(owner)}, so only they or an administrator can: "
        f"chown it to you, or give you write access"
    )


def _user_name(uid: int) -> str:
    try:
        return f"the user {pwd.getpwuid(uid).pw_name}"
    except KeyError:  # no such user on this machine (a file from elsewhere)
        return f"user id {uid}"


def is_access_errno(number: int | None) -> bool:
    return number in (errno.EACCES, errno.EPERM, errno.EROFS)


def _mounted_read_only(folder: Path) -> bool:
    try:
        return bool(os.statvfs(folder).f_flag & os.ST_RDONLY)
    except OSError:
        return False


def _missing_wal_note(path: Path) -> str:
    """Say so when the file is in WAL mode and its -wal is absent (reads need it too)."""
    wal = path.with_name(path.name + "-wal")
    if wal.exists():
        return ""
    try:
        with open(path, "rb") as stream:
            header = stream.read(20)
    except OSError:
        return ""
    if len(header) == 20 and header[18] == header[19] == _WAL_MODE:
        return (
            f", and {wal.name} is missing: a WAL database needs it even to be read, "
            "and it cannot be created there"
        )
    return ""
