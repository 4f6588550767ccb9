"""Writing a file a person asked for, safely: the export of the CLI and the window.

Here rather than in either front end because both use it and the window may not
import the command line. Plain ``os``: no Qt, so the CLI stays light.
"""

from __future__ import annotations

import os
from pathlib import Path


def write_private(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` in one step, readable only by its owner.

    Task definitions may hold secrets, hence 0600. Written beside the target and
    renamed over it, so a full disk or an interrupted export never leaves half a file
    where a good one was.
    """
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as error:  # name the file the person asked for, not the temporary one
        raise OSError(error.errno, error.strerror, str(path)) from None
    try:
        with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
            stream.write(text)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
