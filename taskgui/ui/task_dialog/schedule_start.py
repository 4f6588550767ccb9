"""When an edited schedule starts, as the schedule editor works it out: pure functions.

Kept apart from the editor's widgets so the rules can be read (and tested) without Qt:
which run of a schedule is the next to come, and whether a task's stored start is one
no one picked (a cron task's first match), which a new schedule must not inherit.
"""

from __future__ import annotations

from datetime import datetime

from taskgui.core.recurrence import Cron, Recurrence

__all__ = ["derived_start", "next_to_come"]


def next_to_come(first: datetime, recurrence: Recurrence, now: datetime) -> datetime | None:
    """The schedule's first run at or after ``now`` (``first`` itself if still ahead)."""
    first = recurrence.first_at_or_after(first)
    if first >= now or not recurrence.is_recurring:
        return first
    return recurrence.catch_up(first, now).next_at


def derived_start(recurrence: Recurrence | None, start: datetime | None, now: datetime) -> bool:
    """Whether ``start`` is a cron schedule's own next match, still to come: the first
    run stored for a cron task, derived from when it was made, not a start someone
    chose (the two cannot be told apart later; see ScheduleEditor.schedule)."""
    if not isinstance(recurrence, Cron) or start is None or start <= now:
        return False
    try:
        return recurrence.first_at_or_after(start) == start
    except (ValueError, OverflowError):
        return False
