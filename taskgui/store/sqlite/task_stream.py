"""Every stored task read on a connection of its own, for a thread of its own.

A window over 100,000 tasks wants them all, but the thread that runs the schedule and
the window must not wait a second for the disk and the decoding before it shows the
first rows. ``stream_tasks`` reads them in id order, in batches (a small first one, so
the first rows are on screen at once), on a read-only connection it opens itself: it
is meant to run on a plain worker thread and hands over only plain data (decoded
``TaskSnapshot`` values and ids). A row it cannot decode is not set aside here, since
that is a write: its id goes back with the batch, and the owner reads that row again
through its own connection, which reports and sets it aside as it always does.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

from taskgui.core.status import TaskSnapshot
from taskgui.core.task import TaskId
from taskgui.store import codec
from taskgui.store.errors import CodecError
from taskgui.store.protocols import TaskBatch
from taskgui.store.sqlite.connection import BUSY_TIMEOUT_MS

FIRST_BATCH = 100  # a screenful and more: on screen in a few milliseconds
BATCH = 2_000
_SELECT = (
    f"SELECT {', '.join(codec.TASK_COLUMNS)} FROM tasks WHERE id > ? "
    "AND id NOT IN (SELECT task_id FROM quarantine) ORDER BY id LIMIT ?"
)


def stream_tasks(path: Path) -> Iterator[TaskBatch]:
    """(decoded tasks, ids of rows that could not be decoded), batch by batch in id
    order. Raises sqlite3.Error if the file cannot be read (the caller falls back)."""
    connection = sqlite3.connect(
        f"{path.resolve().as_uri()}?mode=ro",
        uri=True,
        isolation_level=None,
        timeout=BUSY_TIMEOUT_MS / 1000,
    )
    try:
        decode = codec.RowDecoder().snapshot
        last, size = 0, FIRST_BATCH
        while True:
            rows = connection.execute(_SELECT, (last, size)).fetchall()
            if not rows:
                return
            snapshots: list[TaskSnapshot] = []
            unreadable: list[TaskId] = []
            for row in rows:
                try:
                    snapshots.append(decode(row))
                except CodecError:
                    unreadable.append(row[0])
            yield snapshots, unreadable
            last, size = rows[-1][0], BATCH
    finally:
        connection.close()
