"""What a person can do to the schedule, as engine call + commit, in one place.

The Qt scheduler service, the CLI (when no scheduler is running) and the request
handler (when one is) all change the schedule through these methods, so the rule
"the engine decides, the repository commits, then anyone acts" is written once.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from enum import StrEnum
from typing import Any

from taskgui.core.engine import Engine
from taskgui.core.errors import InvalidTaskError
from taskgui.core.events import Event
from taskgui.core.status import TaskStatus
from taskgui.core.task import TaskId, TaskSpec
from taskgui.store import codec
from taskgui.store.errors import CodecError
from taskgui.store.repository import TaskRepository, check_storable


class Op(StrEnum):
    """Operations one process can ask the process running the schedule to perform."""

    ADDED = "added"  # the task row was inserted by the requester; schedule it
    UPDATE = "update"  # payload: the new definition
    CANCEL = "cancel"
    PAUSE = "pause"
    RESUME = "resume"
    RUN_NOW = "run_now"
    RETRY_NOW = "retry_now"
    DELETE = "delete"


class Operations:
    """Engine + repository: every change decided by the engine, committed, returned."""

    def __init__(self, engine: Engine, repository: TaskRepository) -> None:
        self.engine = engine
        self.repository = repository

    def _commit(self, events: list[Event], now: datetime) -> list[Event]:
        self.repository.apply(events, now)
        return events

    def add(self, specs: Sequence[TaskSpec], now: datetime) -> tuple[list[TaskSpec], list[Event]]:
        """Store new tasks (assigning ids) and schedule them."""
        stored = self.repository.add_tasks(specs, now)
        events: list[Event] = []
        for spec in stored:
            events.extend(self.engine.add(spec))
        return stored, events

    def update(self, spec: TaskSpec, now: datetime) -> list[Event]:
        # Refused before the engine takes it: once the engine has, a failed commit
        # would leave the two disagreeing.
        check_storable(spec)
        return self._commit(self.engine.update(spec, now), now)

    def cancel(self, task_id: TaskId, now: datetime) -> list[Event]:
        return self._commit(self.engine.cancel(task_id), now)

    def pause(self, task_id: TaskId, now: datetime) -> list[Event]:
        return self._commit(self.engine.pause(task_id), now)

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
        if task_id is None:
            raise InvalidTaskError(f"request {op.value} names no task")
        if op is Op.ADDED:
            if task_id in self.engine:
                return []
            return self.engine.add(self.repository.get(task_id).spec)
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
        handlers = {
            Op.CANCEL: self.cancel,
            Op.PAUSE: self.pause,
            Op.RESUME: self.resume,
            Op.RUN_NOW: self.run_now,
            Op.RETRY_NOW: self.retry_now,
            Op.DELETE: self.delete,
        }
        return handlers[op](task_id, now)


_SPEC_COLUMNS = len(codec.TASK_COLUMNS) - len(codec.STATUS_COLUMNS)  # id + definition


def encode_spec(spec: TaskSpec) -> str:
    """A definition as JSON, to travel in a request."""
    values: list[Any] = [spec.id, *codec.spec_values(spec)]
    return json.dumps({"v": codec.JSON_VERSION, "row": values})


def decode_spec(text: str) -> TaskSpec:
    """The definition ``encode_spec`` wrote; InvalidTaskError for anything else.

    The text comes from another process through the database, so it may be anything:
    JSON nested too deep to parse, a row of the wrong length or types. Each is refused
    with what is wrong, never raised as some other error.
    """
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as error:
        raise InvalidTaskError(f"the request's definition is not readable JSON ({error})") from None
    if not isinstance(data, dict) or data.get("v") != codec.JSON_VERSION:
        raise InvalidTaskError("the request's definition has an unknown format")
    row = data.get("row")
    if not isinstance(row, list) or len(row) != _SPEC_COLUMNS:
        raise InvalidTaskError("the request's definition is not a task's row")
    # RowDecoder reads whole rows; a blank status fills the columns it expects.
    try:
        snapshot = codec.RowDecoder().snapshot((*row, *codec.status_values(TaskStatus())))
    except CodecError as error:
        raise InvalidTaskError(f"the request's definition is not valid: {error}") from None
    return snapshot.spec
