"""Carrying on a shared schedule's runs when a new leader builds its engine.

On a shared schedule a run may go on while the leader changes: another node runs it,
or will claim it. A new leader's engine takes such runs back as its own (``load``'s
``carried_on``), as if it had dispatched them, so their ends reach it with
``finished`` and its policies decide what follows; a run that already ended meets
its task's policy as what it ended as, never as an interruption, and is told as
``finished`` would have told it (a ``RunFinished`` first): no engine decided that end
before, so this is the one decision about it, and its log line and notifications
come from it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from taskgui.core.engine.entry import TaskEntry
from taskgui.core.engine.wake import Waking
from taskgui.core.events import Event, RunFinished, TaskChanged
from taskgui.core.states import RunOutcome, SlotKind
from taskgui.core.status import RunTicket
from taskgui.core.task import TaskId


@dataclass(frozen=True, slots=True, kw_only=True)
class CarriedRun:
    """A run of a shared schedule that was dispatched before this engine led (see
    ``Engine.load``): ``ref`` is the caller's name for it (the store's row id);
    ``outcome`` is None while it goes on; ``finished_at`` is when it ended (None:
    unknown, taken as the load's moment)."""

    ref: int
    attempt: int
    kind: SlotKind
    scheduled_at: datetime
    dispatched_at: datetime
    outcome: RunOutcome | None = None
    finished_at: datetime | None = None


class CarryingOn(Waking):
    """The engine's part that carries runs on (see the module docstring)."""

    def _carry_all_on(
        self,
        entries: Sequence[TaskEntry],
        carried_on: Mapping[TaskId, Sequence[CarriedRun]],
        now: datetime,
        events: list[Event],
    ) -> None:
        self.carried_ids = {}
        for entry in entries:
            self._carry_on(entry, carried_on[entry.spec.id], now, events)

    def _carry_on(
        self, entry: TaskEntry, runs: Sequence[CarriedRun], now: datetime, events: list[Event]
    ) -> None:
        """A task stored as running whose runs another node may still run (see load)."""
        going = [run for run in runs if run.outcome is None]
        if not going:  # its runs all ended: the latest one's outcome decides
            entry.attempt = max(entry.attempt, 1)
            latest = runs[-1] if runs else None
            outcome = (latest.outcome if latest else None) or RunOutcome.INTERRUPTED
            if latest is not None:
                events.append(RunFinished(self._ticket(entry, latest), outcome,
                                          latest.finished_at or now))  # fmt: skip
            self._after_run(entry, outcome, now, events)
        for run in going:
            ticket = self._ticket(entry, run)
            entry.add_run(ticket)
            self._runs[ticket.run_id] = ticket
            self.carried_ids[run.ref] = ticket.run_id
            entry.attempt = max(entry.attempt, run.attempt)
            key = entry.spec.concurrency_key
            if key is not None:
                self._queues.acquire_key(key)
                self._run_keys[ticket.run_id] = key
        # Its next occurrence was planned when the run was dispatched.
        if self._should_queue(entry) and entry.spec.id not in self._time:
            self._queue(entry)
        events.append(TaskChanged(self._snapshot(entry)))

    def _ticket(self, entry: TaskEntry, run: CarriedRun) -> RunTicket:
        return RunTicket(
            run_id=next(self._run_ids),
            task_id=entry.spec.id,
            attempt=run.attempt,
            kind=run.kind,
            scheduled_at=run.scheduled_at,
            dispatched_at=run.dispatched_at,
        )
