"""The engine's half of a calm wake-up (the policies are in ``core/wake.py``).

``calm_wake`` is called when the service learns the computer woke (the wall clock ran
ahead of the monotonic one, or logind said so), *before* anything due is dispatched.
It takes every run the sleep made due out of the time queue, lets each task's misfire
policy decide first (a skipped occurrence stays skipped; a coalesced one stands for
the latest that passed, so its next occurrence lies ahead), and then applies the
wake-up policy to the rest: each start moved to where the policy puts it (the
occurrence it stands for is kept, so the schedule goes on from the occurrence, as with
a spread) and the changes returned as ``TaskChanged`` for the store to commit, or the
task held for a person's answer (``answer_wake``).

A held task is in no queue; a person's change to it (edit, pause, run now, delete)
takes it out of the hold (``EngineBase._unqueue``) and it follows that change. The
hold lives in memory: after a restart a held run is a late occurrence like any other.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable
from datetime import datetime, timedelta

from taskgui.core.engine.dispatch import Dispatching
from taskgui.core.engine.entry import TaskEntry
from taskgui.core.events import Event, OccurrencesSkipped, SkipReason, TaskChanged
from taskgui.core.states import RunOutcome, SlotKind, TaskState
from taskgui.core.wake import (
    CALM_FROM,
    CatchUp,
    WakeAnswer,
    WakeKind,
    WakePolicy,
    WakeQuestion,
    spread_starts,
)


class Waking(Dispatching):
    """``calm_wake`` and ``answer_wake`` (see the module docstring)."""

    @property
    def held_count(self) -> int:
        """How many tasks' catch-ups wait for a person's answer."""
        return len(self._held)

    def calm_wake(
        self, now: datetime, default: WakePolicy, *, can_ask: bool
    ) -> tuple[list[Event], WakeQuestion | None]:
        """Apply the wake-up policies to the runs due at ``now``.

        ``default``: for tasks without their own. ``can_ask``: a person can answer
        (a window); else ``ask`` spreads. Returns the events to commit, and the
        question to put to the person when runs are held (None: nothing held).
        Fewer than ``CALM_FROM`` runs due: nothing changes, they run as they are.
        """
        events: list[Event] = []
        now_ts = now.timestamp()
        if self._tasks.deferred_count:
            self._load_due(now_ts, events)
        candidates = [
            entry
            for entry in (
                self._tasks[task_id]
                for task_id in self._time.ids_with_key_at_most((now_ts, sys.maxsize))
            )
            # A manual run was asked for by a person; a running task's backlog is its
            # overlap policy's to judge.
            if entry.slot_kind is not SlotKind.MANUAL and not entry.runs
        ]
        if len(candidates) < CALM_FROM:
            return events, None
        now_starts: list[TaskEntry] = []
        spreading: list[tuple[TaskEntry, timedelta]] = []
        held: list[TaskEntry] = []
        for entry in candidates:
            self._time.discard(entry.spec.id)
            assert entry.slot_at is not None
            late = (
                entry.slot_kind is SlotKind.OCCURRENCE
                and now - entry.slot_at > entry.spec.misfire_grace
            )
            if late and not self._misfire(entry, now, events):
                continue  # skipped by its misfire policy, queued at its next occurrence
            policy = entry.spec.on_wake or default
            if policy.kind is WakeKind.NOW:
                now_starts.append(entry)
            elif policy.kind is WakeKind.ASK and can_ask:
                held.append(entry)
            else:
                spreading.append((entry, policy.spread))
        self._start(((entry, now) for entry in now_starts), events)
        self._spread(spreading, now, events)
        for entry in held:
            self._held[entry.spec.id] = None
            events.append(TaskChanged(self._snapshot(entry)))
        if not held:
            return events, None
        # Counting any still held from an earlier wake-up: one answer is for them all.
        names = tuple(self._tasks[task_id].spec.name for task_id in self._held)
        return events, WakeQuestion(len(names), names)

    def answer_wake(self, answer: WakeAnswer, now: datetime, width: timedelta) -> list[Event]:
        """What the person chose for the held catch-ups: run them now, spread them
        over ``width``, or skip them (each recorded as missed, "skipped when it woke")."""
        held = [self._tasks[task_id] for task_id in self._held if task_id in self._tasks]
        self._held.clear()
        events: list[Event] = []
        if answer is WakeAnswer.NOW:
            self._start(((entry, now) for entry in held), events)
        elif answer is WakeAnswer.SPREAD:
            self._spread([(entry, width) for entry in held], now, events)
        else:
            for entry in held:
                self._skip_woken(entry, now, events)
        return events

    def _spread(
        self, spreading: list[tuple[TaskEntry, timedelta]], now: datetime, events: list[Event]
    ) -> None:
        by_id = {entry.spec.id: entry for entry, _ in spreading}
        catch_ups = [
            CatchUp(entry.spec.id, entry.spec.priority, entry.slot_at, width)  # type: ignore[arg-type]
            for entry, width in spreading
        ]
        starts = spread_starts(catch_ups, now)
        self._start(((by_id[task_id], start) for task_id, start in starts), events)

    def _start(self, starts: Iterable[tuple[TaskEntry, datetime]], events: list[Event]) -> None:
        """Queue each task's slot to start then, standing for the run it was."""
        for entry, start in starts:
            assert entry.slot_kind is not None
            entry.set_slot(
                entry.slot_kind,
                start,
                attempt=entry.slot_attempt,
                scheduled=entry.slot_scheduled or entry.slot_at,
            )
            self._queue(entry)
            events.append(TaskChanged(self._snapshot(entry)))

    def _skip_woken(self, entry: TaskEntry, now: datetime, events: list[Event]) -> None:
        occurrence = entry.slot_scheduled or entry.slot_at
        assert occurrence is not None
        events.append(OccurrencesSkipped(entry.spec.id, 1, True, occurrence, SkipReason.WAKE))
        entry.last_outcome = RunOutcome.MISSED
        if entry.slot_kind is SlotKind.OCCURRENCE:
            if entry.uses_fixed_delay:  # the next one a delay after now, as after a run
                next_at = now + entry.spec.recurrence.interval  # type: ignore[union-attr]
            else:
                next_at = entry.spec.recurrence.next_after(occurrence)
        else:  # a retry: the attempt is dropped, the schedule goes on
            next_at = entry.deferred_at
            entry.deferred_at = None
        if next_at is None:
            entry.clear_slot()
            if not entry.spec.recurrence.is_recurring:
                entry.terminal = TaskState.MISSED
        else:
            self._set_occurrence(entry, next_at)
            self._queue(entry)
        events.append(TaskChanged(self._snapshot(entry)))
