"""Tasks known by id and next run time only, in flat arrays: about 25 bytes a task.

A daemon with 100,000 or a million pending tasks spends most of its life waiting for
a few of them. Keeping every idle task as a decoded definition costs about a
kilobyte each; keeping its id and run time in Python objects (a dict entry, a tuple
and a time-queue key) still costs 600 bytes. ``ColdTasks`` keeps them as three
``array('q')`` columns and a ``bytearray`` of tombstones instead:

* ``ids`` ascending, with ``run_at`` (µs since the epoch, or ``UNQUEUED``) beside
  each: a task is found by bisecting its id, O(log n);
* ``order``: the positions of the queued ones sorted by (run at, position), the
  order the time queue would pop them in (ties by id, as a full load breaks them);
* ``gone``: a task read (or dropped) leaves a tombstone; nothing moves.

A task's seq (its tie-breaker in the time queue) is the first seq plus its position,
so a task read late ties exactly as it would have at a full load. The structure only
shrinks: a task is taken out when it is read, never put back.
"""

from __future__ import annotations

from array import array
from bisect import bisect_left
from collections.abc import Iterable, Iterator

from taskgui.core.errors import InvalidTaskError
from taskgui.core.task import TaskId

UNQUEUED = (1 << 63) - 1  # the run time of a task not in the time queue: sorts last


class ColdTasks:
    """See the module docstring. Positions are indexes into ``ids``."""

    __slots__ = (
        "_at",
        "_count",
        "_cursor",
        "_first_seq",
        "_gone",
        "_id_cursor",
        "_ids",
        "_order",
        "judge_whole",
    )

    def __init__(self, rows: Iterable[tuple[TaskId, object]]) -> None:
        """``rows``: (id, run at in µs or None), ids strictly ascending (the store
        streams them in from its cursor: no list of tuples in between). A run time
        that is neither an int nor None is the store's word for a row it could not
        judge from its columns: that id goes to ``judge_whole`` instead."""
        ids = array("q")
        run_at = array("q")
        add_id, add_at = ids.append, run_at.append
        self.judge_whole: list[TaskId] = []
        last = -(1 << 63)
        for task_id, at in rows:
            if task_id <= last:
                raise InvalidTaskError("a stored task id appears twice")
            last = task_id
            if at is None:
                add_id(task_id)
                add_at(UNQUEUED)
            elif at.__class__ is int:
                add_id(task_id)
                add_at(at)
            else:
                self.judge_whole.append(task_id)
        queued = len(run_at) - run_at.count(UNQUEUED)
        # A stable sort by run time: equal times stay in position (id) order.
        order = array("q", sorted(range(len(ids)), key=run_at.__getitem__))
        del order[queued:]
        self._ids = ids
        self._at = run_at
        self._order = order
        self._gone = bytearray(len(ids))
        self._cursor = 0  # every position in order before this one is gone
        self._id_cursor = 0  # every position before this one is gone (for lowest)
        self._count = len(ids)
        self._first_seq = 0

    def number_from(self, first_seq: int) -> int:
        """Give the tasks their seqs from ``first_seq`` on; returns the next free one."""
        self._first_seq = first_seq
        return first_seq + len(self._ids)

    def __iter__(self) -> Iterator[tuple[TaskId, int | None]]:
        """(id, run at in µs or None) of every cold task, ascending."""
        gone, at = self._gone, self._at
        for pos, task_id in enumerate(self._ids):
            if not gone[pos]:
                yield task_id, None if at[pos] == UNQUEUED else at[pos]

    def __len__(self) -> int:
        return self._count

    def position(self, task_id: object) -> int | None:
        """Where a cold task is; None if it is not cold (never was, or was read)."""
        if not isinstance(task_id, int):  # a dict lookup's key may be anything
            return None
        ids = self._ids
        pos = bisect_left(ids, task_id)
        if pos < len(ids) and ids[pos] == task_id and not self._gone[pos]:
            return pos
        return None

    def seq(self, pos: int) -> int:
        return self._first_seq + pos

    def run_at_us(self, pos: int) -> int | None:
        at = self._at[pos]
        return None if at == UNQUEUED else at

    def take(self, pos: int) -> None:
        """The task at ``pos`` is read (or dropped): it is cold no more."""
        if not self._gone[pos]:
            self._gone[pos] = 1
            self._count -= 1

    def head_us(self) -> int | None:
        """The earliest run time among the cold tasks; None when none is queued."""
        pos = self._head()
        return None if pos is None else self._at[pos]

    def due_by(self, until_ts: float, limit: int | None = None) -> list[TaskId]:
        """The ids of up to ``limit`` cold tasks due at ``until_ts`` (epoch seconds) or
        before, earliest first. The caller reads them (``take``)."""
        if self._head() is None:
            return []
        order, at, gone, ids = self._order, self._at, self._gone, self._ids
        found: list[TaskId] = []
        for index in range(self._cursor, len(order)):
            pos = order[index]
            if gone[pos]:
                continue
            if at[pos] / 1_000_000 > until_ts or (limit is not None and len(found) >= limit):
                break
            found.append(ids[pos])
        return found

    def lowest(self, limit: int | None) -> list[TaskId]:
        """The ids of up to ``limit`` cold tasks (all when None), lowest first."""
        gone, ids = self._gone, self._ids
        while self._id_cursor < len(ids) and gone[self._id_cursor]:
            self._id_cursor += 1
        found: list[TaskId] = []
        for pos in range(self._id_cursor, len(ids)):
            if limit is not None and len(found) >= limit:
                break
            if not gone[pos]:
                found.append(ids[pos])
        return found

    def _head(self) -> int | None:
        order, gone = self._order, self._gone
        cursor = self._cursor
        while cursor < len(order) and gone[order[cursor]]:
            cursor += 1
        self._cursor = cursor
        return order[cursor] if cursor < len(order) else None
