"""What a person can do to the schedule, as engine call + commit, in one place.

The Qt scheduler service, the CLI (when no scheduler is running) and the request
handler (when one is) all change the schedule through these methods, so the rule
"the engine decides, the repository commits, then anyone acts" is written once.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from datetime import datetime

from taskgui.core.engine.engine import Engine
from taskgui.core.errors import InvalidTaskError, TaskNotFoundError, UnreadableTaskError
from taskgui.core.events import Event, TaskChanged
from taskgui.core.iso_time import read_iso
from taskgui.core.operation import Op
from taskgui.core.task import TaskId, TaskSpec
from taskgui.core.text_rules import shortened
from taskgui.store.errors import CodecError
from taskgui.store.protocols import TaskRepository, check_storable
from taskgui.store.requests import decode_spec, read_added_ids

log = logging.getLogger(__name__)


class Operations:
    """Engine + repository: every change decided by the engine, committed, returned."""

    def __init__(self, engine: Engine, repository: TaskRepository) -> None:
        self.engine = engine
        self.repository = repository

    def _commit(self, events: list[Event], now: datetime) -> list[Event]:
        self.repository.apply(events, now)
        return events

    def add(self, specs: Sequence[TaskSpec], now: datetime) -> tuple[list[TaskSpec], list[Event]]:
        """Store new tasks (assigning ids) and schedule them.

        A task's "run after" must name tasks that exist (a new task cannot close a
        cycle: nothing runs after it yet)."""
        for spec in specs:
            if spec.after:
                self.engine.check_upstreams(spec)
        stored = self.repository.add_tasks(specs, now)
        events: list[Event] = []
        for spec in stored:
            events.extend(self.engine.add(spec))
        return stored, self._commit_drawn_starts(events, now)

    def _commit_drawn_starts(self, events: list[Event], now: datetime) -> list[Event]:
        """A spread task's first start is drawn by the engine after the insert wrote the
        unspread one (TaskChanged): commit it, or a restart would lose it. Other adds
        have nothing to commit, and pay nothing for this."""
        if any(isinstance(event, TaskChanged) for event in events):
            self.repository.apply([e for e in events if isinstance(e, TaskChanged)], now)
        return events

    def _add_stored(self, task_ids: Sequence[TaskId]) -> list[Event]:
        """Schedule tasks another process stored (one ``added`` request of many): each
        read and added on its own, so one that is gone (deleted since) or cannot be
        read (set aside at the next start) keeps none of the others out. A store that
        fails is not one of those: it fails the request, whose sender is told."""
        events: list[Event] = []
        left_out: list[str] = []
        for task_id in task_ids:
            if task_id in self.engine:
                continue
            try:
                events += self.engine.add(self.repository.get(task_id).spec)
            except (TaskNotFoundError, UnreadableTaskError, InvalidTaskError, CodecError) as error:
                left_out.append(f"{task_id} ({error})")
        if left_out:  # one line a request, not one a task
            log.warning(
                "%d of %d tasks added by another process not scheduled: %s",
                len(left_out), len(task_ids), shortened("; ".join(left_out)),
            )  # fmt: skip
        return events

    def update(self, spec: TaskSpec, now: datetime) -> list[Event]:
        # Refused before the engine takes it: once the engine has, a failed commit
        # would leave the two disagreeing.
        check_storable(spec)
        self.engine.check_upstreams(spec)  # no cycle, no task that does not exist
        return self._commit(self.engine.update(spec, now), now)

    def cancel(self, task_id: TaskId, now: datetime) -> list[Event]:
        return self._commit(self.engine.cancel(task_id), now)

    def pause(self, task_id: TaskId, now: datetime, until: datetime | None = None) -> list[Event]:
        return self._commit(self.engine.pause(task_id, until), now)

    def resume(self, task_id: TaskId, now: datetime) -> list[Event]:
        return self._commit(self.engine.resume(task_id), now)

    def run_now(self, task_id: TaskId, now: datetime) -> list[Event]:
        return self._commit(self.engine.run_now(task_id, now), now)

    def retry_now(self, task_id: TaskId, now: datetime) -> list[Event]:
        return self._commit(self.engine.retry_now(task_id, now), now)

    def delete(self, task_id: TaskId, now: datetime) -> list[Event]:
        return self._commit(self.engine.remove(task_id), now)

    def perform(
        self, op: Op, task_id: TaskId | None, payload: str | None, now: datetime
    ) -> list[Event]:
        """Carry out a request from another process."""
        if op is Op.ADDED:
            if task_id is not None:
                if task_id in self.engine:
                    return []
                return self._commit_drawn_starts(
                    self.engine.add(self.repository.get(task_id).spec), now
                )
            return self._commit_drawn_starts(self._add_stored(read_added_ids(payload)), now)
        if task_id is None:
            raise InvalidTaskError(f"request {op.value} names no task")
        if op is Op.UPDATE:
            if payload is None:
                raise InvalidTaskError("update request carries no definition")
            spec = decode_spec(payload)
            if spec.id != task_id:
                # The row says which task the sender meant; a payload naming another
                # would rewrite a task nobody asked to change.
                raise InvalidTaskError(
                    f"the update of task {task_id} carries the definition of task "
                    f"{spec.id}; refused"
                )
            return self.update(spec, now)
        if op is Op.PAUSE and payload is not None:
            return self.pause(task_id, now, pause_end(payload))
        handlers = {
            Op.CANCEL: self.cancel,
            Op.PAUSE: self.pause,
            Op.RESUME: self.resume,
            Op.RUN_NOW: self.run_now,
            Op.RETRY_NOW: self.retry_now,
            Op.DELETE: self.delete,
        }
        return handlers[op](task_id, now)


def pause_end(payload: str) -> datetime:
    """A pause request's payload: when the pause for a while ends (ISO 8601, UTC)."""
    until = read_iso(payload)
    if until is None or until.utcoffset() is None:
        raise InvalidTaskError(f"the end of the pause is not a time: {payload[:40]!r}")
    return until
