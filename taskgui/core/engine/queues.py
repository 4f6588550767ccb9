"""The places a queued task can wait, and the moves between them.

- the **time queue**: not yet due, keyed ``(run_at, seq)`` (a heap or a wheel, see
  ``time_queue``);
- the **ready heap**: due, waiting for a worker, keyed ``(-priority, run_at, seq)``;
- a **key heap** per concurrency key: due, but a task with the same key is running;
- the **overlap wait**: due, but the task's own previous run is still going;
- the **condition wait**: due, but a run condition does not hold (``condition_wait``).

A task is in at most one of them, and every move is O(log n): nothing here scans.
"""

from __future__ import annotations

from taskgui.core.engine.condition_wait import ConditionWait
from taskgui.core.engine.heap import IndexedHeap
from taskgui.core.engine.time_queue import TimeKey, TimeQueue
from taskgui.core.states import WaitReason
from taskgui.core.task import TaskId

__all__ = ["DispatchQueues", "ReadyKey", "TimeKey"]

ReadyKey = tuple[int, float, int]


class DispatchQueues:
    """The engine's queues. Holds ids and keys only; the engine owns the tasks."""

    __slots__ = ("_blocked", "_busy_keys", "_overlap_wait", "conditions", "ready", "time")

    def __init__(self, time: TimeQueue) -> None:
        self.time = time
        self.ready: IndexedHeap[TaskId, ReadyKey] = IndexedHeap()
        self._blocked: dict[str, IndexedHeap[TaskId, ReadyKey]] = {}
        self._busy_keys: dict[str, int] = {}
        self._overlap_wait: dict[TaskId, ReadyKey] = {}
        self.conditions = ConditionWait()

    def clear(self) -> None:
        self.time.clear()
        self.ready.clear()
        self._blocked.clear()
        self._busy_keys.clear()
        self._overlap_wait.clear()
        self.conditions.clear()

    def discard(self, task_id: TaskId, concurrency_key: str | None) -> TaskId | None:
        """Take a task out of whichever queue holds it.

        A task leaving the ready heap may have been first in line for its free key
        (``release_key`` put it there); the next one parked on that key then takes
        its place, or it would wait for a key nobody holds. Returns that one's id.
        """
        if self.time.discard(task_id):
            return None
        if self.ready.discard(task_id):
            return self._unblock(concurrency_key)
        if self._overlap_wait.pop(task_id, None) is not None:
            return None
        if self.conditions.release(task_id) is not None:
            return None
        if concurrency_key is None:
            return None
        blocked = self._blocked.get(concurrency_key)
        if blocked is not None and blocked.discard(task_id) and not blocked:
            del self._blocked[concurrency_key]
        return None

    # --- concurrency keys

    def key_busy(self, concurrency_key: str) -> bool:
        return concurrency_key in self._busy_keys

    def park_on_key(self, task_id: TaskId, concurrency_key: str, key: ReadyKey) -> None:
        """A due task whose key is busy waits here, without holding up other tasks."""
        self._blocked.setdefault(concurrency_key, IndexedHeap()).push(task_id, key)

    def acquire_key(self, concurrency_key: str) -> None:
        self._busy_keys[concurrency_key] = self._busy_keys.get(concurrency_key, 0) + 1

    def release_key(self, concurrency_key: str) -> TaskId | None:
        """A run holding the key ended; the best task parked on it becomes ready.

        Returns that task's id (it now waits for a worker, not for the key), if any.
        """
        remaining = self._busy_keys[concurrency_key] - 1
        if remaining:
            self._busy_keys[concurrency_key] = remaining
            return None
        del self._busy_keys[concurrency_key]
        return self._unblock(concurrency_key)

    def _unblock(self, concurrency_key: str | None) -> TaskId | None:
        """Move the best task parked on a key nobody holds to the ready heap."""
        if concurrency_key is None or concurrency_key in self._busy_keys:
            return None
        blocked = self._blocked.get(concurrency_key)
        if not blocked:
            return None
        task_id, key = blocked.pop()
        self.ready.push(task_id, key)
        if not blocked:
            del self._blocked[concurrency_key]
        return task_id

    # --- overlap policy QUEUE

    def wait_for_previous_run(self, task_id: TaskId, key: ReadyKey) -> None:
        self._overlap_wait[task_id] = key

    def previous_run_finished(self, task_id: TaskId) -> None:
        key = self._overlap_wait.pop(task_id, None)
        if key is not None:
            self.ready.push(task_id, key)

    def waits_for_previous_run(self, task_id: TaskId) -> bool:
        return task_id in self._overlap_wait

    # --- views

    def waiting_reason(self, task_id: TaskId, concurrency_key: str | None) -> WaitReason | None:
        if task_id in self.ready:
            return WaitReason.WORKER
        if task_id in self._overlap_wait:
            return WaitReason.PREVIOUS_RUN
        if task_id in self.conditions.by_id:
            return self.conditions.reason(task_id)
        if concurrency_key is not None and task_id in self._blocked.get(concurrency_key, ()):
            return WaitReason.CONCURRENCY_KEY
        return None
