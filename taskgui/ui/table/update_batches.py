"""The task table's update coalescing: adds and changes announced in timed batches.

The service publishes a bulk import, or a wake that finds thousands of tasks due, as a
synchronous burst of signals, and every row event costs the proxy and the view some
work (placing the row, relayout), so handling each on the spot would freeze the window
for seconds. The model's slots only update its cache and queue the task here; rows are
inserted and ``dataChanged`` emitted on the next turns of the event loop, changes
first, as many per turn as keep the turn near 25 ms (measured with the clock's
monotonic time), so paints and input get in between. ``flush_all()`` does it all at
once.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QObject, QTimer

from taskgui.core.clock import Clock
from taskgui.core.task import TaskId
from taskgui.runtime.guard import never_raises

DEFAULT_MAX_BATCH = 2_000  # rows per event-loop turn, at most
INITIAL_BATCH = 64
MIN_BATCH = 8
# A turn of the event loop while queued rows drain should take about TURN_TARGET_S.
# What the rows cost *after* a flush (the view's relayout of its header, the repaint)
# is outside the flush, so the flush gets what the rest of the last turn left over.
TURN_TARGET_S = 0.025
FIRST_BUDGET_S = 0.010
MIN_BUDGET_S = 0.003

Announce = Callable[[list[TaskId]], None]


class UpdateBatches(QObject):
    """Queued adds and changes of one model, handed back to it in sized batches.

    ``announce_changes`` gets ids whose rows changed (the model emits ``dataChanged``),
    ``insert_rows`` ids to append as rows, ``after_turn`` is called at the end of each
    turn (the model's coalesced ``counts_changed``). The batch size adapts to what a
    turn's budget fits, between ``MIN_BATCH`` and ``max_batch``.
    """

    def __init__(
        self,
        clock: Clock,
        *,
        announce_changes: Announce,
        insert_rows: Announce,
        after_turn: Callable[[], None],
        max_batch: int = DEFAULT_MAX_BATCH,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        if max_batch < 1:
            raise ValueError("max_batch must be at least 1")
        self._clock = clock
        self._announce_changes = announce_changes
        self._insert_rows = insert_rows
        self._after_turn = after_turn
        self._max_batch = max_batch
        self._batch = min(max_batch, INITIAL_BATCH)
        self._flushed_at: float | None = None  # monotonic end of the last flush turn
        self._adds: dict[TaskId, None] = {}  # added, not yet rows (ordered set)
        self._changes: dict[TaskId, None] = {}  # rows changed, not yet announced
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(0)
        self._timer.timeout.connect(self._on_timer_timeout)

    @property
    def queued(self) -> int:
        """Adds and changes received but not yet announced."""
        return len(self._adds) + len(self._changes)

    def is_queued_add(self, task_id: TaskId) -> bool:
        return task_id in self._adds

    def add(self, task_id: TaskId) -> None:
        self._adds[task_id] = None
        self._start()

    def change(self, task_id: TaskId) -> None:
        self._changes[task_id] = None
        self._start()

    def changed_counts(self) -> None:
        """Only the counts moved (a removal): make sure a turn comes to announce them."""
        self._start()

    def discard_add(self, task_id: TaskId) -> bool:
        """Forget a queued add; False if the task is not one (it is a row already)."""
        return self._adds.pop(task_id, 0) is None

    def discard_change(self, task_id: TaskId) -> None:
        self._changes.pop(task_id, None)

    def clear(self) -> None:
        """Forget everything queued (the model was reset)."""
        self._timer.stop()
        self._flushed_at = None
        self._adds = {}
        self._changes = {}

    def flush_all(self) -> None:
        """Announce every queued change and insert every queued add, now."""
        self._timer.stop()
        self._flushed_at = None
        while self._adds or self._changes:
            self._flush(self.queued)
        self._after_turn()

    def _start(self) -> None:
        if not self._timer.isActive():
            self._timer.start()

    def _on_timer_timeout(self) -> None:
        self._turn()
        if self._adds or self._changes:
            self._timer.start()

    @never_raises("task table: announcing queued updates")
    def _turn(self) -> None:
        started = self._clock.monotonic()
        budget = FIRST_BUDGET_S
        if self._flushed_at is not None:
            budget = max(MIN_BUDGET_S, TURN_TARGET_S - (started - self._flushed_at))
        done = self._flush(self._batch)
        ended = self._clock.monotonic()
        if done >= MIN_BATCH and ended > started:
            fits = done * budget / (ended - started)
            self._batch = int(max(MIN_BATCH, min(self._max_batch, (self._batch + fits) / 2)))
        self._flushed_at = ended if self._adds or self._changes else None
        self._after_turn()

    def _flush(self, limit: int) -> int:
        """Hand on up to ``limit`` queued ids, changes first; returns how many.

        Changes go first, so rows already shown are current before new ones join them.
        """
        done = 0
        if self._changes:
            batch = _take(self._changes, limit)
            self._announce_changes(batch)
            done = len(batch)
        if done < limit and not self._changes and self._adds:
            batch = _take(self._adds, limit - done)
            self._insert_rows(batch)
            done += len(batch)
        return done


def _take(queue: dict[TaskId, None], limit: int) -> list[TaskId]:
    """Remove and return up to ``limit`` ids from the front of an ordered set."""
    batch: list[TaskId] = []
    for task_id in queue:
        if len(batch) >= limit:
            break
        batch.append(task_id)
    for task_id in batch:
        del queue[task_id]
    return batch
