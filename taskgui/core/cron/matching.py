"""Which wall-clock minutes a cron expression matches, and the next one after a time.

Pure calendar arithmetic on naive wall times: no zone, no DST (``cron_dst`` maps
these minutes onto real instants). The day rule is cronie's: day of month and day of
week are ANDed when either field starts with ``*``, ORed when both are restricted.

``next_match`` jumps rather than steps: it finds the month's matching days once (they
are cached per month), then the first hour and minute by bisection, so the next match
of any expression costs a few microseconds however far away it is.
"""

from __future__ import annotations

import calendar
from bisect import bisect_left
from datetime import datetime, tzinfo

from taskgui.core.cron.grammar import CronFields

# The Gregorian calendar repeats every 400 years (146,097 days, a whole number of
# weeks), so an expression that has no match in 400 years never matches.
SEARCH_YEARS = 401
_MONTH_CACHE_LIMIT = 4096


class CronCalendar:
    """The matching minutes of one parsed expression. Not thread-safe (its cache is a
    plain dict); each ``Cron`` owns one, and the scheduler asks from one thread."""

    __slots__ = ("_days_anded", "_fields", "_hours", "_minutes", "_month_days", "_months")

    def __init__(self, fields: CronFields) -> None:
        self._fields = fields
        self._minutes = fields.minutes
        self._hours = fields.hours
        self._months = fields.months
        self._days_anded = fields.days_anded
        self._month_days: dict[tuple[int, int], tuple[int, ...]] = {}

    def matches(self, wall: datetime) -> bool:
        """True when the minute of ``wall`` (naive, seconds ignored) matches."""
        return (
            wall.minute in self._minutes
            and wall.hour in self._hours
            and wall.day in self.days_of(wall.year, wall.month)
        )

    def next_match(self, after: datetime, tz: tzinfo | None = None) -> datetime | None:
        """The first matching minute strictly after the wall time of ``after``, or None
        when there is none before the year 9999 (or within ``SEARCH_YEARS``).

        Only the fields of ``after`` are read (its zone and fold are not); the answer
        is a wall time with ``tzinfo=tz`` and fold 0. Built from fields, never with
        ``datetime.replace``, which costs more than the whole search.
        """
        year, month, day, hour = after.year, after.month, after.day, after.hour
        minute = after.minute + 1  # past the end of an hour, day or month: carried below
        last_year = min(9999, year + SEARCH_YEARS)
        hours, minutes = self._hours, self._minutes
        while True:
            days = self.days_of(year, month)
            index = bisect_left(days, day)
            if index == len(days):  # nothing left this month
                month, day, hour, minute = month + 1, 1, 0, 0
                if month > 12:
                    year, month = year + 1, 1
                    if year > last_year:
                        return None
                continue
            if days[index] != day:
                day, hour, minute = days[index], 0, 0
            index = bisect_left(hours, hour)
            if index == len(hours):  # nothing left today
                day, hour, minute = day + 1, 0, 0
                continue
            if hours[index] != hour:
                hour, minute = hours[index], 0
            index = bisect_left(minutes, minute)
            if index == len(minutes):  # nothing left this hour
                hour, minute = hour + 1, 0
                continue
            return datetime(year, month, day, hour, minutes[index], tzinfo=tz)

    def days_of(self, year: int, month: int) -> tuple[int, ...]:
        """The days of that month that match, ascending (cached)."""
        key = (year, month)
        found = self._month_days.get(key)
        if found is None:
            if len(self._month_days) >= _MONTH_CACHE_LIMIT:
                self._month_days.clear()
            found = self._month_days[key] = self._compute_days(year, month)
        return found

    def _compute_days(self, year: int, month: int) -> tuple[int, ...]:
        if month not in self._months:
            return ()
        fields = self._fields
        first_weekday, length = calendar.monthrange(year, month)  # Monday is 0
        sunday_based = (first_weekday + 1) % 7  # cron counts from Sunday
        matching: list[int] = []
        for day in range(1, length + 1):
            weekday = (sunday_based + day - 1) % 7
            dom = day in fields.days or (fields.last_day and day == length)
            dow = (
                weekday in fields.weekdays
                or (weekday in fields.last_weekdays and day + 7 > length)
                or (weekday, (day + 6) // 7) in fields.nth_weekdays
            )
            if (dom and dow) if self._days_anded else (dom or dow):
                matching.append(day)
        return tuple(matching)
