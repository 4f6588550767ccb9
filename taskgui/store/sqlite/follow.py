"""Reads for a process that follows a schedule another process runs: only what changed.

A follower (a window showing ``taskgui daemon``'s schedule) is told *that* something
was committed (``PRAGMA data_version``), never what. Reading and decoding every task
and every task's latest run at each change made a window following a busy daemon
do the daemon's decoding work all over again, many times a second. Here the rows
are fetched as they are stored and compared with what the follower saw last (a tuple
comparison, in C); only rows that differ are decoded, and of the runs only the ids of
each task's latest finished one are read until one of them is new.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping, Sequence
from contextlib import suppress
from typing import Any

from taskgui.core.states import WaitReason
from taskgui.core.status import TaskSnapshot
from taskgui.core.task import TaskId
from taskgui.store import codec
from taskgui.store.errors import CodecError
from taskgui.store.protocols import TaskChanges

Query = Callable[[str, Sequence[Any]], list[tuple[Any, ...]]]

_SELECT_MARKED = (
    f"SELECT {', '.join(codec.TASK_COLUMNS)}, waiting FROM tasks "
    "WHERE id NOT IN (SELECT task_id FROM quarantine) ORDER BY id"
)
_TASK_WIDTH = len(codec.TASK_COLUMNS)
_LAST_RUN_IDS = "SELECT task_id, MAX(id) FROM runs WHERE outcome IS NOT NULL GROUP BY task_id"


Overlay = Callable[[TaskSnapshot, tuple[Any, ...]], TaskSnapshot]


def task_changes(
    query: Query,
    marks: Mapping[TaskId, object],
    select: str = _SELECT_MARKED,
    overlay: Overlay | None = None,
) -> TaskChanges:
    """What differs from ``marks`` (the marks of the previous answer; {} at first).

    ``select`` gives the task columns, ``waiting``, and any more columns, which
    ``overlay`` lays over the snapshot (a shared schedule's runs in progress, see
    ``store.postgres.follow``).
    """
    decoder: codec.RowDecoder | None = None
    changed = []
    new_marks: dict[TaskId, object] = {}
    for row in query(select, ()):
        task_id = row[0]
        new_marks[task_id] = row
        if marks.get(task_id) == row:
            continue
        decoder = decoder or codec.RowDecoder()
        try:
            snapshot = decoder.snapshot(row[:_TASK_WIDTH])
        except CodecError:
            del new_marks[task_id]  # as list_tasks: left out until someone repairs it
            continue
        waiting = row[_TASK_WIDTH]
        if waiting is not None:
            with suppress(ValueError):  # from a newer taskgui: shown without a reason
                snapshot = snapshot._replace(
                    status=snapshot.status._replace(waiting=WaitReason(waiting))
                )
        if overlay is not None:
            snapshot = overlay(snapshot, row[_TASK_WIDTH + 1 :])
        changed.append(snapshot)
    removed = [task_id for task_id in marks if task_id not in new_marks]
    return TaskChanges(changed=changed, removed=removed, marks=new_marks)


def last_run_ids(query: Query) -> dict[TaskId, int]:
    return dict(query(_LAST_RUN_IDS, ()))


def runs_by_id(query: Query, columns: str, run_ids: Collection[int]) -> list[tuple[Any, ...]]:
    """The rows of ``run_ids`` (in chunks: SQLite limits the parameters of a statement)."""
    ids = sorted(run_ids)
    rows: list[tuple[Any, ...]] = []
    for start in range(0, len(ids), 500):
        chunk = ids[start : start + 500]
        marks = ", ".join("?" * len(chunk))
        rows += query(f"SELECT {columns} FROM runs WHERE id IN ({marks}) ORDER BY id", chunk)
    return rows
