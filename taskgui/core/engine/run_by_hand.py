"""A run a person asked for ("run now") that stands for an occurrence.

Pure functions over a task's entry, for ``Engine.run_now`` (which occurrence the run
asked for is, and what is missed for it) and ``Dispatching._dispatch`` (the run then
goes out as that occurrence).
"""

from __future__ import annotations

from datetime import datetime

from taskgui.core.engine import policies
from taskgui.core.engine.entry import TaskEntry
from taskgui.core.engine.queues import DispatchQueues
from taskgui.core.events import OccurrencesSkipped
from taskgui.core.states import MisfirePolicy, SlotKind

__all__ = ["due_occurrence", "occurrence_run_by_hand"]


def due_occurrence(
    entry: TaskEntry, now: datetime, queues: DispatchQueues, run_all_limit: int
) -> tuple[datetime | None, OccurrencesSkipped | None]:
    """The occurrence a run asked for now is (it then runs as that), if any, and the
    occurrences before it that are missed for it.

    "Run now" on a task whose occurrence is already due means: run it now. Else the
    occurrence came back behind the manual run, found it running and was recorded
    as missed: a one-off added and asked to run before a daemon started showed its
    run and a "missed" record beside it. So the manual slot remembers the
    occurrence (as its ``scheduled``; stored, so a daemon started later knows), and
    the run is dispatched as it: history, the misfire accounting and the ledger on
    disk count it as run, and the schedule goes on from it.

    Only an occurrence already judged to run (waiting for a worker, a key, its
    conditions) or one still within its misfire grace, and not a paused task's:
    one past its grace that nothing judged yet (taskgui was down, the task was
    paused) was missed, and meets its misfire policy as it would have. Under
    ``run_once`` that policy is one catch-up run, standing for the latest occurrence
    that passed, the ones before it missed: the run asked for is that catch-up (it
    was a run of its own and a "missed" record for the catch-up it stood beside).
    """
    if entry.slot_kind is SlotKind.MANUAL:
        # Asked again before it ran (a double click, run-now twice): it still stands
        # for what the first ask found, or the occurrence would run a second time.
        return occurrence_run_by_hand(entry, now), None
    if entry.slot_kind is not SlotKind.OCCURRENCE or entry.spec.paused:
        return None, None
    occurrence = entry.slot_scheduled or entry.slot_at
    if occurrence is None or occurrence > now:
        return None, None  # a future one stays deferred: the schedule goes on as before
    spec = entry.spec
    judged = queues.waiting_reason(spec.id, spec.concurrency_key) is not None
    if judged or now - occurrence <= spec.misfire_grace:
        return occurrence, None
    if spec.misfire is MisfirePolicy.RUN_ONCE:
        verdict = policies.misfire(spec, occurrence, now, run_all_limit)
        return verdict.slot_at or occurrence, verdict.skipped
    return None, None


def occurrence_run_by_hand(entry: TaskEntry, now: datetime) -> datetime | None:
    """The occurrence a manual run starting now runs as, if ``run_now`` said it
    stands for one (its slot remembers that occurrence: ``Engine.run_now``)."""
    deferred = entry.deferred_at
    if (
        entry.slot_kind is SlotKind.MANUAL
        and deferred is not None
        and entry.slot_scheduled == deferred
        and deferred <= now
        and not entry.spec.paused
    ):
        return deferred
    return None
