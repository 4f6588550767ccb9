"""Reading deferred tasks back from SQLite when the engine first needs them.

A cold start reads only each task's id and next run time (see
``taskgui.core.engine.deferred``); ``SqliteTaskSource`` fetches and decodes the rest of a row
on first use, and in batches while the scheduler hydrates after its start. A row that
cannot be decoded is quarantined exactly as a full load would: set aside and kept on
disk, reported, never deleted.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from taskgui.core.errors import UnreadableTaskError
from taskgui.core.states import SlotKind, TaskState
from taskgui.core.status import TaskSnapshot
from taskgui.core.task import TaskId
from taskgui.store import codec
from taskgui.store.errors import CodecError

log = logging.getLogger(__name__)

Row = tuple[Any, ...]
Query = Callable[[str, Sequence[Any]], list[Row]]
Quarantine = Callable[[list[tuple[Row, CodecError]]], None]

_SELECT_TASKS = f"SELECT {', '.join(codec.TASK_COLUMNS)} FROM tasks"
_GONE = "it is no longer in the database"


def _sql_list(values: Iterable[str]) -> str:
    return ", ".join(f"'{value}'" for value in values)


# The engine's rule for a task waiting in the time heap (Engine._should_queue), in
# SQL over the raw columns: a slot, not finished, not paused unless a person asked
# for the run. Only values exactly as taskgui writes them count; anything else is
# left out here and judged when the row is decoded, and the engine then puts its heap
# right (``TaskTable``'s on_load). So a hand-edited row can neither crash the start nor
# keep a task from running.
_WAITING_STATES = _sql_list(
    state.value for state in TaskState if not state.is_terminal and state is not TaskState.RUNNING
)
_SLOT_KINDS = _sql_list(kind.value for kind in SlotKind)
_MIN_US = codec.to_us(datetime.min.replace(tzinfo=UTC))
_MAX_US = codec.to_us(datetime.max.replace(tzinfo=UTC))
_QUEUED_AT = (
    "CASE WHEN typeof(next_run_at) = 'integer' "
    f"AND next_run_at BETWEEN {_MIN_US} AND {_MAX_US} "
    f"AND slot_kind IN ({_SLOT_KINDS}) AND state IN ({_WAITING_STATES}) "
    f"AND (paused = 0 OR (paused = 1 AND slot_kind = '{SlotKind.MANUAL.value}')) "
    "THEN next_run_at END"
)
_NOT_QUARANTINED = "id NOT IN (SELECT task_id FROM quarantine)"
# Loaded whole at the start, never deferred: a running task (loading sends it to its
# retry policy) and one that runs after others, since the engine's index of who runs
# after whom must be complete before any upstream ends (rules_text writes "after":
# only for a task with upstreams; few have one).
# (Each term as its partial index says it, tasks_running and tasks_after: no scan.)
HAS_UPSTREAMS = "instr(rules, '\"after\":') > 0"
# Read whole at the start too, from the same scan as the deferred ones: a task paused
# for a while (the engine's resume heap must hold it, or it would never resume) and
# a row whose raw columns are not exactly as taskgui writes them. A cold task is read
# only when it nears its time, so the start's view of it must be the decoded task's:
# for a row as written it is (``_QUEUED_AT`` is ``Engine._should_queue``); for any
# other, only decoding it says whether and when it runs. One CASE, so that each row
# is judged once: its run time (queued), NULL (not queued) or READ_WHOLE.
# A spread task whose start is its occurrence was written while no scheduler ran
# (the CLI's insert or edit draws no spread): read whole, so that the start draws it
# and commits it, and the window and the CLI show the start it will run at.
READ_WHOLE = "whole"
_ANY_STATE = _sql_list(state.value for state in TaskState if state is not TaskState.RUNNING)
_UNSPREAD = (
    "instr(rules, '\"spread\":{') > 0 "
    f"AND slot_kind = '{SlotKind.OCCURRENCE.value}' AND next_run_at = scheduled_at"
)
_START_COLUMN = (
    f"CASE WHEN rules IS NOT NULL AND (instr(rules, '\"paused_until\":') > 0 OR ({_UNSPREAD})) "
    f"THEN '{READ_WHOLE}' "
    + _QUEUED_AT.removeprefix("CASE ").removesuffix(" END")
    + f" WHEN state IN ({_ANY_STATE}) AND typeof(paused) = 'integer' AND paused IN (0, 1) "
    f"AND (slot_kind IS NULL OR slot_kind IN ({_SLOT_KINDS})) "
    "AND (next_run_at IS NULL OR (typeof(next_run_at) = 'integer' "
    f"AND next_run_at BETWEEN {_MIN_US} AND {_MAX_US})) THEN NULL "
    f"ELSE '{READ_WHOLE}' END"
)
SELECT_DEFERRED = (
    f"SELECT id, {_START_COLUMN} FROM tasks WHERE state != 'running' "
    f"AND (rules IS NULL OR NOT {HAS_UPSTREAMS}) AND {_NOT_QUARANTINED} ORDER BY id"
)
SELECT_LOADED_WHOLE = (
    f"{_SELECT_TASKS} WHERE id IN (SELECT id FROM tasks WHERE state = 'running' "
    f"UNION SELECT id FROM tasks WHERE {HAS_UPSTREAMS}) AND {_NOT_QUARANTINED} ORDER BY id"
)

BATCH = 500  # ids per query: well under SQLite's limit of 32,766 parameters


@lru_cache(maxsize=4)
def _select_ids(count: int) -> str:
    return f"{_SELECT_TASKS} WHERE id IN ({', '.join('?' * count)}) ORDER BY id"


class SqliteTaskSource:
    """``TaskSource`` over the repository's connection (same thread, same snapshot)."""

    def __init__(self, query: Query, quarantine: Quarantine) -> None:
        self._query = query
        self._set_aside = quarantine
        self._decoder = codec.RowDecoder()  # shares repeated JSON values across rows

    def _quarantine(self, bad: list[tuple[Row, CodecError]]) -> None:
        # Logged here as well as reported by the engine (TaskDropped): whatever
        # happens to that event, a row set aside is never a silent one.
        for _row, error in bad:
            log.warning("set aside a stored task that cannot be read: %s", error)
        self._set_aside(bad)

    def fetch(self, task_id: TaskId) -> TaskSnapshot:
        rows = self._query(_SELECT_TASKS + " WHERE id = ?", (task_id,))
        if not rows:
            raise UnreadableTaskError(task_id, _GONE)
        try:
            return self._decoder.snapshot(rows[0])
        except CodecError as error:
            self._quarantine([(rows[0], error)])
            raise UnreadableTaskError(task_id, _reason(task_id, error)) from None

    def fetch_many(
        self, task_ids: Sequence[TaskId]
    ) -> tuple[list[TaskSnapshot], list[UnreadableTaskError]]:
        snapshots: list[TaskSnapshot] = []
        bad: list[tuple[Row, CodecError]] = []
        wanted = set(task_ids)
        found: set[TaskId] = set()
        decode = self._decoder.snapshot
        for start in range(0, len(task_ids), BATCH):
            chunk = task_ids[start : start + BATCH]
            # By rowid, however far apart the ids are: a range would read every row
            # between them (the due tasks of a backlog are anywhere in the table).
            rows = self._query(_select_ids(len(chunk)), chunk)
            for row in rows:
                found.add(row[0])
                try:
                    snapshots.append(decode(row))
                except CodecError as error:
                    bad.append((row, error))
        if bad:
            self._quarantine(bad)
        errors = [UnreadableTaskError(row[0], _reason(row[0], error)) for row, error in bad]
        errors += [UnreadableTaskError(task_id, _GONE) for task_id in wanted - found]
        return snapshots, errors


def _reason(task_id: TaskId, error: CodecError) -> str:
    # CodecError names the task already; UnreadableTaskError says it once.
    return str(error).removeprefix(f"task {task_id}: ")
