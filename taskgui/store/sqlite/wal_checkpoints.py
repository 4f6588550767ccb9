"""WAL checkpoints from a connection of their own, so that another thread can run them.

The scheduler turns SQLite's automatic checkpoints off (they land inside a commit;
see ``SqliteRepository.take_over_checkpoints``) and used to checkpoint on its own
thread between deadlines. Measured under load, that went wrong both ways: at 80 runs
a second the gaps between deadlines were never long enough, so in 30 s one checkpoint
ran, the WAL had grown meanwhile, and that one stalled the scheduler for 113 ms; and a
checkpoint's fsync can take as long as the disk likes. A PASSIVE checkpoint copies
"as many frames as possible without waiting for any database readers or writers to
finish" (SQLite's words): on a second connection it runs beside the scheduler's
commits, so it can run on a thread of its own at a steady pace, whatever the load.

The file is opened read-write but never created (``mode=rw``): if the database is
gone, this says so instead of making an empty one.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from taskgui.store.sqlite.connection import translate_errors


class WalCheckpointer:
    """One connection to an existing database, for ``PRAGMA wal_checkpoint`` only.

    Use it from one thread at a time; close it when done.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        with translate_errors(path):
            self._connection = sqlite3.connect(
                f"{path.resolve().as_uri()}?mode=rw",
                uri=True,
                isolation_level=None,
                check_same_thread=False,
            )

    def checkpoint(self) -> tuple[int, int]:
        """Copy what it can of the WAL into the database without waiting (PASSIVE).

        Returns (frames in the WAL, frames copied): equal when it caught up.
        """
        with translate_errors(self.path):
            _busy, in_wal, copied = self._connection.execute(
                "PRAGMA wal_checkpoint(PASSIVE)"
            ).fetchone()
        return int(in_wal), int(copied)

    def close(self) -> None:
        self._connection.close()
