"""The end of a run, as the service records it: timed by the monotonic clock, and
recorded even when the engine fails on it."""

from __future__ import annotations

import logging
from dataclasses import replace
from datetime import datetime, timedelta

from taskgui.core.engine.engine import Engine
from taskgui.core.events import Event, RunFinished, TaskDropped, TaskRemoved
from taskgui.core.states import RunOutcome
from taskgui.core.status import RunTicket

log = logging.getLogger("taskgui.runtime.service")

# A run's wall-clock span that differs from its monotonic duration by more than this
# crossed a clock jump (NTP slews far less: 0.05 %, 1.8 s over an hour-long run).
DURATION_DRIFT = timedelta(seconds=1)


def run_end_failed(
    engine: Engine,
    ticket: RunTicket | None,
    outcome: RunOutcome,
    now: datetime,
    error: Exception,
) -> list[Event]:
    """The engine failed on the end of a run (a bug, or a value that slipped past
    validation): the run is recorded as ended all the same, and its task set aside
    (kept on disk, out of the schedule from now on, reported), so that one task's
    fault neither leaves a run "running" for ever nor stops the others."""
    if ticket is None:
        raise error  # not a run the engine knew: nothing of a task's to set aside
    reason = f"handling the end of its run failed ({type(error).__name__}: {error})"
    log.debug("the engine failed on the end of run %s", ticket.run_id, exc_info=error)
    events: list[Event] = [RunFinished(ticket, outcome, now)]
    if ticket.task_id in engine:
        try:
            removed = engine.remove(ticket.task_id)
        except Exception:  # the store sets it aside below; the next start leaves it out
            log.debug("could not forget task %s", ticket.task_id, exc_info=True)
        else:
            events += [event for event in removed if not isinstance(event, TaskRemoved)]
    events.append(TaskDropped(ticket.task_id, reason, unreadable=False))
    return events


def timed_by_monotonic(
    events: list[Event], duration: float, started: datetime | None = None
) -> list[Event]:
    """A run's record spans its monotonic ``duration``, whatever the wall clock did.

    The history shows a run's duration as finished minus started, two wall-clock
    readings; a clock jump between them (a correction, a person setting the time)
    would show a run of seconds as three hours. When the two disagree by more than
    ``DURATION_DRIFT``, the record's end becomes its start plus the duration the
    runner measured on the monotonic clock. Only the record: the engine has already
    planned what comes next from the wall clock's now, as everything else is.

    The start is when the run was released to start (``dispatched_at``, see ahead.py),
    or ``started``: a run that waited in the pool's queue for a worker started later
    than it was released, and its end counted from the release came before its start
    (a trial's history: started 19.315, finished 16.291, took -3 s).
    """
    measured = timedelta(seconds=duration)
    return [
        replace(event, finished_at=begun + measured)
        if isinstance(event, RunFinished)
        and abs(event.finished_at - (begun := started or event.run.dispatched_at) - measured)
        > DURATION_DRIFT
        else event
        for event in events
    ]
