"""Rows <-> core objects. Times are integer microseconds since the epoch (UTC), exact.

Commands, schedules and policies are the versioned JSON objects of
``taskgui.core.shape`` (``{"v": 1, ...}``), kept as text, never pickle: readable with any
SQLite tool, and safe to load. A value from a newer encoder, or one that no longer
validates, raises CodecError so the row can be quarantined rather than silently
dropped. This module writes rows; ``row_decoder`` reads them back (``RowDecoder`` is
offered here too, as the stores have always imported it, with ``one_snapshot`` for a
row asked for by id).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import timedelta
from pathlib import Path
from typing import Any

from taskgui.core.conditions import NO_CONDITIONS
from taskgui.core.shape import rules, values
from taskgui.core.shape.fields import SHAPE_VERSION
from taskgui.core.states import SlotKind, TaskState
from taskgui.core.status import TaskSnapshot, TaskStatus
from taskgui.core.task import TaskSpec
from taskgui.store.errors import CodecError
from taskgui.store.marks import marks_text
from taskgui.store.row_decoder import RowDecoder
from taskgui.store.times import from_us, opt_from_us, opt_to_us, to_us

# What the stores import from here (mypy --strict wants re-exports said).
__all__ = [
    "RowDecoder",
    "from_us",
    "new_task_row",
    "new_task_values",
    "one_snapshot",
    "opt_from_us",
    "opt_to_us",
    "readable_snapshots",
    "spec_values",
    "status_values",
    "to_us",
]

JSON_VERSION = SHAPE_VERSION
COMMAND_SHELL_VERSION = values.COMMAND_SHELL_VERSION


TASK_COLUMNS = (
    "id",
    "name",
    "command",
    "priority",
    "first_run_at",
    "recurrence",
    "retry",
    "timeout",
    "concurrency_key",
    "overlap",
    "misfire",
    "misfire_grace",
    "paused",
    "notify",
    "rules",
    "state",
    "attempt",
    "next_run_at",
    "slot_kind",
    "scheduled_at",
    "slot_attempt",
    "deferred_at",
    "last_outcome",
    "last_run_at",
    "after_marks",
)
DEFINITION_COLUMNS = TASK_COLUMNS[1:15]
STATUS_COLUMNS = TASK_COLUMNS[15:]


def _seconds(value: timedelta | None) -> float | None:
    return None if value is None else value.total_seconds()


# ------------------------------------------------------------------- JSON

# The shape's text (``taskgui.core.shape``): the store writes nothing of its own.
encode_command = values.command_text
encode_recurrence = values.schedule_text
encode_retry = values.retry_text
_recurrence_text = values.schedule_text
_retry_text = values.retry_text


def _rules_text(spec: TaskSpec) -> str | None:
    # Most tasks have neither: skip building JSON only to find it empty.
    if (
        spec.spread is None
        and spec.conditions is NO_CONDITIONS
        and spec.paused_until is None
        and spec.on_wake is None
        and not spec.after
        and spec.on_node is None
        and spec.on_tag is None
    ):
        return None
    return rules.rules_text(spec)


# -------------------------------------------------------------------- rows


def spec_values(spec: TaskSpec) -> tuple[Any, ...]:
    """The definition columns (``DEFINITION_COLUMNS``) of a task row."""
    return (
        spec.name,
        encode_command(spec.command),
        spec.priority,
        to_us(spec.first_run_at),
        _recurrence_text(spec.recurrence),
        _retry_text(spec.retry),
        _seconds(spec.timeout),
        spec.concurrency_key,
        spec.overlap.value,
        spec.misfire.value,
        spec.misfire_grace.total_seconds(),
        int(spec.paused),
        None if spec.notify is None else spec.notify.text,
        _rules_text(spec),
    )


def status_values(status: TaskStatus) -> tuple[Any, ...]:
    """The status columns (``STATUS_COLUMNS``) of a task row.

    ``_value_`` is what an enum's ``.value`` returns, without the cost of its property
    (0.3 µs against 0.05): this runs for every task change the scheduler writes.
    """
    slot_kind = status.slot_kind
    last_outcome = status.last_outcome
    return (
        status.state._value_,
        status.attempt,
        opt_to_us(status.next_run_at),
        None if slot_kind is None else slot_kind._value_,
        opt_to_us(status.scheduled_at),
        status.slot_attempt,
        opt_to_us(status.deferred_at),
        None if last_outcome is None else last_outcome._value_,
        opt_to_us(status.last_run_at),
        marks_text(status.after_marks),
    )


_PENDING = TaskState.PENDING.value
_PAUSED = TaskState.PAUSED.value
_OCCURRENCE = SlotKind.OCCURRENCE.value


def new_task_values(spec: TaskSpec) -> tuple[Any, ...]:
    """What a new task's row needs from Python: ``NEW_TASK_VALUES``, in that order.

    The rest of the row follows from these (see ``new_task_row``), so an insert can
    compute it in SQL instead of binding ten more parameters per task: binding is most
    of what a bulk insert costs. ``slot_at`` is the first occurrence (for cron, its
    first match), ``paused`` an integer.
    """
    first = to_us(spec.first_run_at)
    recurrence = spec.recurrence
    # Nothing queued for a task that only runs after others (initial_status); a cron
    # schedule remembers the spans its first matches answer (core/cron/memo.py).
    slot_at = None if spec.only_after else recurrence.first_at_or_after(spec.first_run_at)
    timeout = spec.timeout
    return (
        spec.id,
        spec.name,
        encode_command(spec.command),
        spec.priority,
        first,
        _recurrence_text(recurrence),
        _retry_text(spec.retry),
        None if timeout is None else timeout.total_seconds(),
        spec.concurrency_key,
        spec.overlap._value_,  # what .value returns, without the enum property's cost
        spec.misfire._value_,
        spec.misfire_grace.total_seconds(),
        1 if spec.paused else 0,
        None if spec.notify is None else spec.notify.text,
        _rules_text(spec),
        None if slot_at is None else first if slot_at is spec.first_run_at else to_us(slot_at),
    )


NEW_TASK_VALUES = (*TASK_COLUMNS[:15], "slot_at")


def new_task_row(spec: TaskSpec, now_us: int) -> tuple[Any, ...]:
    """A new task's whole row: ``TASK_COLUMNS``, then ``created_at`` and ``updated_at``.

    The same values as ``(spec.id, *spec_values(spec), *status_values(initial_status(
    spec)), now_us, now_us)``: the first occurrence queued, attempt 0.
    """
    *definition, slot = new_task_values(spec)
    state = _PAUSED if spec.paused else _PENDING
    kind = None if slot is None else _OCCURRENCE
    return (*definition, state, 0, slot, kind, slot, 1, None, None, None, None, now_us, now_us)


def one_snapshot(row: tuple[Any, ...], repair: str, path: Path | None = None) -> TaskSnapshot:
    """A task's row read on its own (a store's ``get``), for a person who asked for it.

    An unreadable row raises CodecError naming the task, that it stays stored but out
    of the schedule, and ``repair``: what to do about it in that store (the tool, the
    backup). ``path`` is the store's file, if it has one.
    """
    try:
        return RowDecoder().snapshot(row)
    except CodecError as error:
        raise CodecError(
            f"{error}; it is kept but left out of the schedule: {repair}", path
        ) from None


def readable_snapshots(rows: Iterable[tuple[Any, ...]]) -> list[TaskSnapshot]:
    """The tasks of ``rows`` that decode, in their order, the others left out: a read
    writes nothing (a load is what sets an unreadable row aside, and says so)."""
    snapshot = RowDecoder().snapshot
    tasks: list[TaskSnapshot] = []
    for row in rows:
        try:
            tasks.append(snapshot(row))
        except CodecError:
            continue
    return tasks
