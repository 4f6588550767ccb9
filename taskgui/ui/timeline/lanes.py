"""What one lane shows in the visible span: runs as bars, occurrences as marks.

Pure (no Qt), and bounded by what is visible, never by how many tasks exist or how
often they run: occurrences are generated from the task's next run only up to the end
of the view (an ``Every`` schedule jumps to the view's start arithmetically), and at
most ``max_marks`` of them; a lane with more than that in view (every minute across a
week) becomes a density strip, its rate measured over the marks it did compute.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from taskgui.core.errors import InvalidTaskError
from taskgui.core.recurrence import Cron, Every
from taskgui.core.states import RunOutcome, TaskState
from taskgui.core.status import RunRecord, TaskSnapshot

EXPECTED_FROM = 10  # recent finished runs whose median is the expected duration


@dataclass(frozen=True, slots=True)
class Bar:
    """A run: finished (``outcome``) or still going (``outcome`` None, ``end`` = now)."""

    start: datetime
    end: datetime
    outcome: RunOutcome | None
    attempt: int = 1
    error: str = ""


@dataclass(frozen=True, slots=True)
class Upcoming:
    """The occurrences in view: exact marks, or a density (occurrences per second)."""

    marks: tuple[datetime, ...]
    dense_from: datetime | None = None  # the strip starts here and runs to the view's end
    rate: float = 0.0


def bars_of(runs: Sequence[RunRecord], start: datetime, end: datetime, now: datetime) -> list[Bar]:
    """The runs that overlap [start, end); a run without an end is still going."""
    bars = []
    for run in runs:
        began = run.started_at or run.scheduled_at
        if run.outcome is RunOutcome.MISSED:
            continue  # never ran: no span to draw
        finished = run.finished_at or now
        if finished < start or began >= end:
            continue
        bars.append(
            Bar(
                start=began,
                end=max(finished, began),
                outcome=run.outcome if run.finished_at is not None else None,
                attempt=run.attempt,
                error=run.error or "",
            )
        )
    return bars


def expected_duration(runs: Sequence[RunRecord]) -> timedelta | None:
    """The median duration of the recent finished runs (None without any)."""
    durations = [
        (run.finished_at - run.started_at).total_seconds()
        for run in runs
        if run.started_at is not None
        and run.finished_at is not None
        and run.outcome is not RunOutcome.MISSED
    ][:EXPECTED_FROM]
    if not durations:
        return None
    return timedelta(seconds=statistics.median(durations))


def upcoming(snapshot: TaskSnapshot, start: datetime, end: datetime, max_marks: int) -> Upcoming:
    """The task's occurrences in [start, end), at most ``max_marks`` of them exactly."""
    status, spec = snapshot.status, snapshot.spec
    if spec.paused or status.state is TaskState.PAUSED:
        return Upcoming(())
    moment = status.next_run_at
    if moment is None or moment >= end:
        return Upcoming(())
    recurrence = spec.recurrence
    if moment < start and isinstance(recurrence, Every):
        interval = recurrence.interval.total_seconds()
        steps = max(0, math.ceil((start - moment).total_seconds() / interval) - 1)
        if steps:
            moment = moment + timedelta(seconds=steps * interval)
    elif moment < start and isinstance(recurrence, Cron):
        try:
            moment = recurrence.first_at_or_after(start)
        except InvalidTaskError:  # no match left in the calendar
            return Upcoming(())
    marks: list[datetime] = []
    guard = 0
    while moment is not None and moment < end:
        if moment >= start:
            if len(marks) >= max_marks:
                first = marks[0]
                seconds = (marks[-1] - first).total_seconds()
                rate = (len(marks) - 1) / seconds if seconds > 0 else float(len(marks))
                return Upcoming((), dense_from=first, rate=rate)
            marks.append(moment)
        else:
            guard += 1
            if guard > 100_000:  # a cron far behind the view: give up, show nothing
                return Upcoming(())
        moment = recurrence.next_after(moment)
    return Upcoming(tuple(marks))
