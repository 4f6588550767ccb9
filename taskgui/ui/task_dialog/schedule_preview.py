"""The schedule editor's preview: what a schedule means and its next runs, in words a
person checks ("Every weekday at 09:00", "Mon 2026-01-05 09:00", ...), local time.

Pure functions of a first run and a ``Recurrence``, so the wording is tested without
widgets.
"""

from __future__ import annotations

from datetime import datetime

from taskgui.core.iso_time import in_zone
from taskgui.core.recurrence import Every, EveryMode, Recurrence

PREVIEW_RUNS = 5
PREVIEW_LINES = PREVIEW_RUNS + 2  # what it means, a heading, the runs
_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def run_time_text(moment: datetime) -> str:
    """A run time in local time with its weekday: ``Mon 2026-01-05 09:00``.

    Fixed English weekday names, like the table's, so the text does not depend on the C
    locale; the year is there because a yearly cron's next runs differ only in it.
    """
    local, zone = in_zone(moment)
    seconds = f":{local.second:02d}" if local.second else ""
    return f"{_WEEKDAYS[local.weekday()]} {local:%Y-%m-%d %H:%M}{seconds}{zone}"


def preview_text(first: datetime, recurrence: Recurrence) -> str:
    """The meaning of a recurring schedule, then its next runs from ``first`` (or only
    the first run, for a fixed delay: the later ones depend on how long runs take)."""
    description = recurrence.describe()
    lines = [description[:1].upper() + description[1:]]
    if isinstance(recurrence, Every) and recurrence.mode is EveryMode.FIXED_DELAY:
        lines.append(f"First run {run_time_text(first)}, local time")
    else:
        lines.append("Next runs (local time):")
        moment: datetime | None = first
        for _ in range(PREVIEW_RUNS):
            if moment is None:
                break
            lines.append("  " + run_time_text(moment))
            try:
                moment = recurrence.next_after(moment)
            except (ValueError, OverflowError):  # the calendar ends (year 9999)
                break
    return "\n".join(lines)
