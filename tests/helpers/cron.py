"""Listing a cron schedule's runs the way the engine finds them: one next_after at a time."""

from __future__ import annotations

from datetime import datetime

from taskgui.core.recurrence import Cron


def runs_between(cron: Cron, start: datetime, end: datetime) -> list[datetime]:
    """Every occurrence in (start, end], by repeatedly asking for the next one."""
    found: list[datetime] = []
    current = cron.next_after(start)
    while current is not None and current <= end:
        found.append(current)
        current = cron.next_after(current)
    return found
