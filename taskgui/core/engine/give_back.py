"""Giving idle tasks back to the store after they ran: the daemon keeps what is due soon.

A cold start keeps every task not due soon as its id and run time only
(``deferred``), and reads one whole when it nears its time. Once it has run, a task
that will not run again for a while would stay whole for the rest of the process's
life, and after a day every task of a large schedule would be; so the caller (the
service, which has committed every change by then) hands back the tasks whose runs
ended: each one that is idle and not due before ``until`` drops its entry and stays
known by its id and run time, its key kept in the time queue (so its place, seq and
all, is what it was), and is read again when it nears its time or anything touches it.

Idle means nothing in memory would be lost: no run in progress or on its way, in no
queue but the time queue (not waiting for a worker, a key, a condition or a previous
run), not held by a wake-up question, not paused for a while (the resume heap holds
it) and not running after other tasks (the dependency index holds it). Everything else
of a task is in its stored row, which is what a restart reads too.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime

from taskgui.core.engine.carry_on import CarryingOn
from taskgui.core.engine.entry import TaskEntry
from taskgui.core.task import TaskId


class GivingBack(CarryingOn):
    """``give_back_idle`` (see the module docstring)."""

    def give_back_idle(self, until: datetime, among: Iterable[TaskId] | None = None) -> int:
        """Give back every task among ``among`` (by default: those whose run ended
        since the last call) that is idle and not due before ``until``; returns how
        many. Call only once every change to them is committed: a task given back is
        read from the store again."""
        ended, self._ended = self._ended, set()
        tasks = self._tasks
        if among is not None:
            ended = set(among)
        if not ended or not tasks.can_give_back:
            return 0
        until_ts = until.timestamp()
        given = 0
        for task_id in ended:
            entry = tasks.get(task_id)
            if entry is None or not self._idle(entry):
                continue
            key = self._time.key_of(task_id) if task_id in self._time else None
            if key is not None and key[0] <= until_ts:
                continue  # due soon: kept whole
            at = entry.slot_at if key is not None else None
            tasks.give_back(entry, None if at is None else _us(at))
            given += 1
        return given

    def _idle(self, entry: TaskEntry) -> bool:
        task_id = entry.spec.id
        return (
            not entry.runs
            and not entry.spec.after
            and entry.spec.paused_until is None
            and task_id not in self._held
            and task_id not in self._resumes
            and self._queues.waiting_reason(task_id, entry.spec.concurrency_key) is None
        )


def _us(at: datetime) -> int:
    """µs since the epoch, exactly (the store's own unit)."""
    delta = at - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
