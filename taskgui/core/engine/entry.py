"""The engine's private bookkeeping for one task.

Mutable on purpose: the engine updates a task on every dispatch and finish, and
allocating a new frozen object each time would cost more than the heap work. It never
leaves the engine; everything outside sees frozen ``TaskSnapshot`` values.
"""

from __future__ import annotations

from datetime import datetime

from taskgui.core.recurrence import Every, EveryMode
from taskgui.core.states import RunOutcome, SlotKind, TaskState, WaitReason
from taskgui.core.status import RunId, RunTicket, TaskSnapshot, TaskStatus
from taskgui.core.task import TaskSpec

# Shared by every entry with no run: most of a large schedule is idle, and an empty
# dict per entry is 64 bytes, twice (``runs`` and ``started``). Written only through
# ``add_run``, ``mark_started`` and ``end_run``, which give an entry its own first.
_NO_RUNS: dict[RunId, RunTicket] = {}
_NONE_STARTED: dict[RunId, datetime] = {}


class TaskEntry:
    """The engine's mutable bookkeeping for one task (never leaves the engine)."""

    __slots__ = (
        "attempt",
        "deferred_at",
        "last_outcome",
        "last_run_at",
        "runs",
        "seq",
        "slot_at",
        "slot_attempt",
        "slot_kind",
        "slot_scheduled",
        "spec",
        "started",
        "terminal",
    )

    def __init__(self, spec: TaskSpec) -> None:
        self.spec = spec
        self.terminal: TaskState | None = None
        self.attempt = 0
        self.slot_kind: SlotKind | None = None
        self.slot_at: datetime | None = None
        self.slot_scheduled: datetime | None = None
        self.slot_attempt = 1
        self.seq = 0
        self.deferred_at: datetime | None = None
        self.last_outcome: RunOutcome | None = None
        self.last_run_at: datetime | None = None
        self.runs = _NO_RUNS  # read-only here: see add_run
        self.started = _NONE_STARTED

    @classmethod
    def restored(cls, snapshot: TaskSnapshot) -> TaskEntry:
        """The bookkeeping for a task as it was stored.

        A task stored as running comes back with no runs (they ended with the process
        that ran them); ``Engine.load`` sends it to its retry policy.
        """
        spec, status = snapshot
        entry = cls(spec)
        state = status.state
        if state.is_terminal:
            entry.terminal = state
        entry.attempt = status.attempt
        at = status.next_run_at
        kind = status.slot_kind
        if at is not None and kind is not None:
            entry.slot_kind = kind
            entry.slot_at = at
            entry.slot_scheduled = status.scheduled_at or at
            entry.slot_attempt = status.slot_attempt
        entry.deferred_at = status.deferred_at
        entry.last_outcome = status.last_outcome
        entry.last_run_at = status.last_run_at
        return entry

    def add_run(self, ticket: RunTicket) -> None:
        if self.runs is _NO_RUNS:
            self.runs = {}
        self.runs[ticket.run_id] = ticket

    def mark_started(self, run_id: RunId, at: datetime) -> None:
        if self.started is _NONE_STARTED:
            self.started = {}
        self.started[run_id] = at

    def end_run(self, run_id: RunId) -> None:
        """Forget a run (KeyError if it is not this entry's); the last one to end
        gives the shared empty tables back."""
        del self.runs[run_id]
        self.started.pop(run_id, None)
        if not self.runs:
            self.runs = _NO_RUNS
        if not self.started:
            self.started = _NONE_STARTED

    @property
    def uses_fixed_delay(self) -> bool:
        # isinstance, not getattr with a default: ONCE and Cron have no ``mode``, and
        # the AttributeError getattr swallows cost more than a dispatch's heap work.
        recurrence = self.spec.recurrence
        return isinstance(recurrence, Every) and recurrence.mode is EveryMode.FIXED_DELAY

    def set_slot(
        self,
        kind: SlotKind,
        at: datetime,
        *,
        attempt: int = 1,
        scheduled: datetime | None = None,
    ) -> None:
        """Queue one run at ``at``; ``scheduled``: the occurrence it stands for, when a
        spread starts it later (the schedule goes on from the occurrence, not the start)."""
        self.slot_kind = kind
        self.slot_at = at
        self.slot_scheduled = scheduled or at  # due then, whatever the slot is for
        self.slot_attempt = attempt

    def clear_slot(self) -> None:
        self.slot_kind = None
        self.slot_at = None
        self.slot_scheduled = None
        self.slot_attempt = 1

    @property
    def state(self) -> TaskState:
        """Derived, never stored: a cancelled task stays cancelled even while its
        process is being stopped, and a paused task still shows a run it was asked for."""
        if self.terminal is not None:
            return self.terminal
        if self.runs:
            return TaskState.RUNNING
        if self.spec.paused and self.slot_kind is not SlotKind.MANUAL:
            return TaskState.PAUSED
        if self.slot_kind is SlotKind.RETRY:
            return TaskState.RETRYING
        return TaskState.PENDING

    def snapshot(
        self, waiting: WaitReason | None, marks: frozenset[int] = frozenset()
    ) -> TaskSnapshot:
        started = self.started
        # Built with tuple.__new__, in TaskStatus's field order: the NamedTuples' own
        # __new__ is a Python function that only packs its arguments, and this runs
        # for every event the engine returns (tests/core/engine/test_entry.py holds
        # the order to the fields). The fields after ``after_marks`` are the engine's
        # to leave at their defaults (``_LAID_OVER``).
        return _tuple_new(
            TaskSnapshot,
            (
                self.spec,
                _tuple_new(
                    TaskStatus,
                    (  # noqa: RUF005 - "+ ()" returns the tuple itself; "*" would copy
                        self.state,
                        self.attempt,
                        self.slot_at,
                        self.slot_kind,
                        self.slot_scheduled,
                        self.slot_attempt,
                        self.deferred_at,
                        self.last_outcome,
                        self.last_run_at,
                        len(self.runs),
                        min(started.values()) if started else None,
                        waiting,
                        marks,
                    )
                    + _LAID_OVER,
                ),
            ),
        )


_tuple_new = tuple.__new__
# TaskStatus's fields after ``after_marks``, which others lay over the status (a
# store's ``nodes``): at their defaults, whatever fields are added there.
_LAID_OVER = tuple(
    TaskStatus._field_defaults[name]
    for name in TaskStatus._fields[TaskStatus._fields.index("after_marks") + 1 :]
)
