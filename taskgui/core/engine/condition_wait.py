"""Due tasks whose run conditions do not hold: where they wait, and until when.

A due task that needs AC power while the machine is on battery does not sit in the
ready heap (it would hold a place it cannot use) and is not polled: it is parked here
under the condition it waits for, with its ready key kept, so that when that fact
changes the engine looks at exactly these tasks and puts those that may now run back
in line where they were. Each has a give-up time (the next occurrence, or its own
"give up waiting after"), kept in a heap so the earliest is known in O(1).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

from taskgui.core.conditions import Condition, Unmet
from taskgui.core.engine.heap import IndexedHeap
from taskgui.core.states import WaitReason
from taskgui.core.task import TaskId

ReadyKey = tuple[int, float, int]

_REASON = {
    Condition.AC_POWER: WaitReason.AC_POWER,
    Condition.NETWORK: WaitReason.NETWORK,
    Condition.UNMETERED: WaitReason.UNMETERED,
    Condition.IDLE: WaitReason.IDLE,
}


def wait_reason(unmet: Unmet) -> WaitReason:
    """The wait reason a task shows for a condition that does not hold."""
    return _REASON[unmet.condition] if unmet.checkable else WaitReason.UNCHECKABLE


class ConditionWait:
    """Tasks parked on a condition, each with its ready key and its give-up time."""

    __slots__ = ("_give_up", "_idle", "by_id")

    def __init__(self) -> None:
        # Read-only outside (``DispatchQueues.waiting_reason`` asks it for every
        # snapshot, and ``in`` on a dict costs no Python call); change it here only.
        self.by_id: dict[TaskId, tuple[Unmet, ReadyKey]] = {}
        self._give_up: IndexedHeap[TaskId, float] = IndexedHeap()
        # Those waiting for the user to be idle: the only ones the idle time is read
        # for, so finding when to read it never walks the other waiting tasks.
        self._idle: set[TaskId] = set()

    def __len__(self) -> int:
        return len(self.by_id)

    def __contains__(self, task_id: object) -> bool:
        return task_id in self.by_id

    def clear(self) -> None:
        self.by_id.clear()
        self._give_up.clear()
        self._idle.clear()

    def park(
        self, task_id: TaskId, unmet: Unmet, key: ReadyKey, give_up_at: datetime | None
    ) -> None:
        """Wait on ``unmet``; give up at ``give_up_at`` (None: wait for as long as it takes)."""
        self.by_id[task_id] = (unmet, key)
        self._follow_idle(task_id, unmet)
        if give_up_at is not None:
            timestamp = give_up_at.timestamp()
            if task_id in self._give_up:
                self._give_up.update(task_id, timestamp)
            else:
                self._give_up.push(task_id, timestamp)

    def repark(self, task_id: TaskId, unmet: Unmet) -> None:
        """The task still waits, now on another condition (same key, same give-up)."""
        _old, key = self.by_id[task_id]
        self.by_id[task_id] = (unmet, key)
        self._follow_idle(task_id, unmet)

    def release(self, task_id: TaskId) -> ReadyKey | None:
        """Take the task out; its ready key, or None if it was not parked."""
        parked = self.by_id.pop(task_id, None)
        if parked is None:
            return None
        self._give_up.discard(task_id)
        self._idle.discard(task_id)
        return parked[1]

    def unmet(self, task_id: TaskId) -> Unmet | None:
        parked = self.by_id.get(task_id)
        return None if parked is None else parked[0]

    def reason(self, task_id: TaskId) -> WaitReason | None:
        parked = self.by_id.get(task_id)
        return None if parked is None else wait_reason(parked[0])

    def parked(self) -> Iterator[TaskId]:
        """Every waiting task (a snapshot of the ids: safe to release while iterating)."""
        return iter(list(self.by_id))

    def idle_waiters(self) -> list[TaskId]:
        """The tasks waiting for the user to be idle (and for nothing before that)."""
        return list(self._idle)

    def _follow_idle(self, task_id: TaskId, unmet: Unmet) -> None:
        if unmet.condition is Condition.IDLE and unmet.checkable:
            self._idle.add(task_id)
        else:
            self._idle.discard(task_id)

    def next_give_up(self) -> float | None:
        return self._give_up.peek()[1] if self._give_up else None

    def given_up(self, now_ts: float) -> list[TaskId]:
        """The tasks whose give-up time has come, taken out (earliest first)."""
        expired: list[TaskId] = []
        while self._give_up and self._give_up.peek()[1] <= now_ts:
            task_id, _at = self._give_up.pop()
            self.by_id.pop(task_id, None)
            self._idle.discard(task_id)
            expired.append(task_id)
        return expired
