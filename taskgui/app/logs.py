"""Where taskgui logs: the user's log folder (rotated) and stderr.

Once per process, whatever starts it (the window, the daemon); the window and the
daemon call it first, so every error of a start is in the log.
"""

from __future__ import annotations

import io
import logging
import logging.handlers
import os
import sys
from pathlib import Path

from taskgui.core.errors import TaskguiError
from taskgui.store.private_folders import make_log_folder


def configure_logging(verbose: bool = False) -> Path | None:
    """Log to the user log folder (rotated) and to stderr; return the log file path."""
    root = logging.getLogger("taskgui")
    root.setLevel(logging.DEBUG if verbose else logging.INFO)
    for existing in root.handlers:  # once per process, however many windows start
        if isinstance(existing, logging.handlers.RotatingFileHandler):
            return Path(existing.baseFilename)
    formatter = logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s")
    stderr = logging.StreamHandler(sys.stderr)
    stderr.setFormatter(formatter)
    # A record marked ``extra={"file_only": True}`` was already told on stderr in the
    # CLI's own one-line format; the log file still gets it.
    stderr.addFilter(lambda record: not getattr(record, "file_only", False))
    root.addHandler(stderr)
    try:
        path = make_log_folder() / "taskgui.log"
        handler = PrivateRotatingFileHandler(
            path, maxBytes=5_000_000, backupCount=3, encoding="utf-8"
        )
    except (OSError, TaskguiError) as error:
        root.warning("cannot write the log file (%s); logging to stderr only", error)
        return None
    handler.setFormatter(formatter)
    root.addHandler(handler)
    return path


class PrivateRotatingFileHandler(logging.handlers.RotatingFileHandler):
    """A rotating log whose files are 0600 whatever the umask.

    The log holds commands, their errors and paths; under umask 000 the standard
    handler made ``taskgui.log`` (and each file it rotates to) 0666. The folder is
    0700 too, but a file should not rely on that.
    """

    def _open(self) -> io.TextIOWrapper:
        fd = os.open(self.baseFilename, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        os.fchmod(fd, 0o600)  # a file an older taskgui created under a wide umask
        return open(fd, "a", encoding=self.encoding, errors=self.errors)  # O_APPEND: "a"
