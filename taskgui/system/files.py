"""Writing a file a person asked for, safely: the export of the CLI and the window, and
the autostart entry.

Here rather than in either front end because both use it and the window may not
import the command line. Plain ``os``: no Qt, so the CLI stays light.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

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
