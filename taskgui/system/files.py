"""Writing a file a person asked for, safely: the export of the CLI and the window, and
the autostart entry; and reading one, bounded: the import of both.

Here rather than in either front end because both use it and the window may not
import the command line. Plain ``os``: no Qt, so the CLI stays light.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Protocol

from taskgui.core.errors import InvalidTaskError, TaskguiError

# The most an import reads: a file or a stream that goes on for ever (/dev/zero, `yes |`)
# took memory without end (8.5 GB in 10 s) before this. An export of 100,000 tasks is
# about 54 MB, so this holds some 450,000; a crontab is kilobytes.
MAX_IMPORT_BYTES = 256 * 1024 * 1024
_CHUNK = 1024 * 1024


class Readable(Protocol):
    """A binary stream, as far as reading it goes (a file, stdin's buffer)."""

    def read(self, size: int = ..., /) -> bytes: ...


# What lstat can find at a path, besides a regular file, in words.
_KINDS = (
    (stat.S_ISLNK, "a symbolic link"),
    (stat.S_ISDIR, "a folder"),
    (stat.S_ISFIFO, "a named pipe (FIFO)"),
    (stat.S_ISCHR, "a device"),
    (stat.S_ISBLK, "a device"),
    (stat.S_ISSOCK, "a socket"),
)


def write_private(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` in one step, readable only by its owner.

    Task definitions may hold secrets, hence 0600 (whatever the umask). Written beside
    the target and renamed over it, so a full disk or an interrupted export never
    leaves half a file where a good one was. Only a regular file is ever replaced:
    renaming over a named pipe, a device or a symbolic link would put a regular file
    where something else was (as root, even over ``/dev/null``), so those are refused
    untouched, before anything is written.
    """
    refuse_unless_regular(path)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except OSError as error:  # name the file the person asked for, not the temporary one
        raise OSError(error.errno, error.strerror, str(path)) from None
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
            os.fchmod(stream.fileno(), 0o600)
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise


def refuse_unless_regular(path: Path) -> None:
    """Raise OSError (naming ``path``) if something other than a regular file is there."""
    try:
        mode = os.lstat(path).st_mode
    except FileNotFoundError:
        return
    for test, kind in _KINDS:
        if test(mode):
            raise OSError(
                errno.EEXIST,
                f"{kind} is there, not a regular file, and taskgui does not replace it; "
                "choose a file name instead",
                str(path),
            )


def read_bounded_text(name: str, stream: Readable, limit: int = MAX_IMPORT_BYTES) -> str:
    """All of ``stream`` as UTF-8 text, reading no more than ``limit`` bytes (and one):
    InvalidTaskError naming ``name`` when there is more, or it is not UTF-8."""
    held = bytearray()  # grown in place: no second copy to join
    while chunk := stream.read(min(_CHUNK, limit + 1 - len(held))):
        held += chunk
        if len(held) > limit:
            raise InvalidTaskError(
                f"{name} is larger than {limit // (1024 * 1024)} MB: not an export or a "
                "crontab taskgui can read"
            )
    try:
        return held.decode("utf-8")
    except UnicodeDecodeError:
        raise InvalidTaskError(f"{name} is not UTF-8 text") from None


def read_import_file(path: str, limit: int = MAX_IMPORT_BYTES) -> str:
    """The text of the file at ``path``, bounded (see ``read_bounded_text``); a
    TaskguiError saying which file and why when it cannot be read."""
    try:
        with open(path, "rb") as stream:
            return read_bounded_text(path, stream, limit)
    except OSError as error:
        why = (error.strerror or str(error)).lower()
        if isinstance(error, IsADirectoryError):
            # A folder where a file is wanted: bad input (exit 2), as an export to a
            # folder is (a trial saw 1 and 2 for the same path); a file that is not
            # there or cannot be read is the operation failing (exit 1).
            raise InvalidTaskError(f"cannot read {path}: {why}") from None
        raise TaskguiError(f"cannot read {path}: {why}") from None
