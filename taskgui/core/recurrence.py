"""When a task runs again: ``Once``, ``Every`` and ``Cron``.

A recurrence is a small pure value. The engine asks it for the occurrence after a
scheduled time (``next_after``) and, when a task is found late, how many occurrences
were missed and where the schedule goes on (``catch_up``). Fixed-rate schedules add the
interval to the *scheduled* time, never to the finish time, so a task that always
finishes late never drifts.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from enum import StrEnum
from functools import cached_property, lru_cache
from typing import TypeAlias
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from cron_descriptor import Options, get_description
from croniter import CroniterBadDateError, croniter

from taskgui.core.duration import check_duration, describe_interval
from taskgui.core.errors import InvalidTaskError

MIN_INTERVAL = timedelta(seconds=1)
# Cron looks at local wall time, and at the very start of the calendar a zone west of
# UTC has none (0001-01-01 00:00 UTC is year 0 in New York). A day in, every zone has.
_CALENDAR_START = datetime(1, 1, 2, tzinfo=UTC)
# How many cron occurrences catch_up counts one by one before it gives an estimate;
# a minutely cron after a year of downtime would otherwise cost half a million steps.
CATCH_UP_COUNT_CAP = 10_000

_CRON_MACROS = {
    "@yearly": "0 0 1 1 *",
    "@annually": "0 0 1 1 *",
    "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0",
    "@daily": "0 0 * * *",
    "@midnight": "0 0 * * *",
    "@hourly": "0 * * * *",
}


@dataclass(frozen=True, slots=True)
class CatchUp:
    """What a late occurrence missed: ``missed`` occurrences after it up to now.

    ``exact`` is False when counting stopped at the cap (``missed`` is then a lower
    bound). ``next_at`` is the first occurrence after now (None: the schedule ended).
    """

    missed: int
    exact: bool
    next_at: datetime | None


@dataclass(frozen=True, slots=True)
class Once:
    """Runs a single time, at the task's first run time."""

    is_recurring = False

    def first_at_or_after(self, start: datetime) -> datetime:
        return start

    def next_after(self, scheduled_at: datetime, finished_at: datetime | None = None) -> None:
        return None

    def catch_up(self, scheduled_at: datetime, now: datetime) -> CatchUp:
        return CatchUp(missed=0, exact=True, next_at=None)

    def advance(self, scheduled_at: datetime, steps: int) -> None:
        return None

    def describe(self) -> str:
        return "once"


def _later(moment: datetime, delta: timedelta) -> datetime | None:
    """``moment + delta``, or None where that is past year 9999: no further occurrence.

    Durations are bounded at validation (``core.duration.MAX_DURATION``), but a start
    near the end of the calendar, or a row stored before the bound, still reaches it;
    a schedule that ends there is the honest answer, an OverflowError is not.
    """
    try:
        return moment + delta
    except OverflowError:
        return None


class EveryMode(StrEnum):
    """Where the interval of an ``Every`` is measured from."""

    FIXED_RATE = "fixed_rate"  # from the scheduled time: a steady cadence, no drift
    FIXED_DELAY = "fixed_delay"  # from the end of the previous run: never overlaps


@dataclass(frozen=True, slots=True)
class Every:
    """Runs every ``interval``, at a fixed rate or after a fixed delay."""

    interval: timedelta
    mode: EveryMode = EveryMode.FIXED_RATE

    is_recurring = True

    def __post_init__(self) -> None:
        check_duration(self.interval, "the repeat interval")
        if self.interval < MIN_INTERVAL:
            raise InvalidTaskError("the repeat interval must be at least 1 second")
        if not isinstance(self.mode, EveryMode):
            try:
                object.__setattr__(self, "mode", EveryMode(self.mode))
            except ValueError:
                raise InvalidTaskError(
                    f"repeat mode {self.mode!r} is not one of fixed_rate, fixed_delay"
                ) from None

    def first_at_or_after(self, start: datetime) -> datetime:
        """The first run is the start itself: it anchors the interval grid."""
        return start

    def next_after(
        self, scheduled_at: datetime, finished_at: datetime | None = None
    ) -> datetime | None:
        """The next occurrence: scheduled + interval, or finish + interval for fixed delay.

        None past the end of the calendar (year 9999): the schedule ends there.
        """
        if self.mode is EveryMode.FIXED_DELAY and finished_at is not None:
            return _later(finished_at, self.interval)
        return _later(scheduled_at, self.interval)

    def catch_up(self, scheduled_at: datetime, now: datetime) -> CatchUp:
        """Occurrences on the grid ``scheduled_at + k * interval`` that are at or before now.

        Fixed delay has no grid of its own; it is anchored at the late occurrence so
        that skipping and coalescing behave the same way for both modes.
        """
        if now < scheduled_at:
            return CatchUp(missed=0, exact=True, next_at=_later(scheduled_at, self.interval))
        missed = (now - scheduled_at) // self.interval  # exact integer arithmetic
        return CatchUp(missed=missed, exact=True, next_at=self.advance(scheduled_at, missed + 1))

    def advance(self, scheduled_at: datetime, steps: int) -> datetime | None:
        try:
            return _later(scheduled_at, self.interval * steps)
        except OverflowError:  # the multiplication itself: beyond any calendar
            return None

    def describe(self) -> str:
        text = f"every {describe_interval(self.interval)}"
        if self.mode is EveryMode.FIXED_DELAY:
            text += " after the previous run finishes"
        return text


def normalize_cron(expr: str) -> str:
    """Return the 5-field form of ``expr`` (macros expanded), or raise InvalidTaskError."""
    text = " ".join(expr.split())
    if not text:
        raise InvalidTaskError("the cron expression is empty; write it like '0 9 * * 1-5'")
    if text.startswith("@"):
        if text.lower() == "@reboot":
            raise InvalidTaskError("@reboot is not a time schedule; taskgui cannot run it")
        try:
            return _CRON_MACROS[text.lower()]
        except KeyError:
            known = ", ".join(sorted(_CRON_MACROS))
            raise InvalidTaskError(f"unknown cron macro {text!r}; use one of {known}") from None
    fields = text.split(" ")
    if len(fields) != 5:
        raise InvalidTaskError(
            f"a cron expression has 5 fields (minute hour day month weekday), "
            f"{text!r} has {len(fields)}"
        )
    if not croniter.is_valid(text):
        raise InvalidTaskError(
            f"{text!r} is not a valid cron expression; e.g. '*/5 * * * *' is every "
            "5 minutes, '0 9 * * 1-5' is 09:00 on weekdays"
        )
    return text


def load_zone(name: str) -> ZoneInfo:
    """The ZoneInfo for an IANA name, or InvalidTaskError naming what went wrong."""
    if not isinstance(name, str) or not name.strip():
        raise InvalidTaskError("the time zone is empty; use an IANA name like 'Europe/Berlin'")
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError):
        raise InvalidTaskError(
            f"unknown time zone {name!r}; use an IANA name like 'Europe/Berlin' or 'UTC'"
        ) from None


@dataclass(frozen=True)
class Cron:
    """Runs whenever a 5-field cron expression matches, in time zone ``tz``.

    Daylight saving time, the way cronie handles it: a time that does not exist
    (spring forward) runs at the first valid moment after the gap; a time that occurs
    twice (fall back) runs once, unless the minute or hour field starts with ``*``
    (then the schedule is about elapsed time, and both hours run).
    """

    expr: str
    tz: str = "UTC"

    is_recurring = True

    def __post_init__(self) -> None:
        if not isinstance(self.expr, str):
            raise InvalidTaskError("the cron expression must be text like '0 9 * * 1-5'")
        object.__setattr__(self, "expr", normalize_cron(self.expr))
        load_zone(self.tz)
        probe = datetime(2000, 1, 1, tzinfo=UTC)
        try:
            croniter(self.expr, probe.astimezone(self._zone)).get_next(datetime)
        except CroniterBadDateError:
            raise InvalidTaskError(f"the cron expression {self.expr!r} never matches") from None

    @cached_property
    def _zone(self) -> ZoneInfo:
        return load_zone(self.tz)

    @property
    def _runs_hourly_or_more(self) -> bool:
        """cronie's test for "about elapsed time": a wildcard minute or hour field."""
        minute, hour = self.expr.split(" ")[:2]
        return minute.startswith("*") or hour.startswith("*")

    def _is_repeated_wall_time(self, local: datetime) -> bool:
        """True for the second instance of a wall time that a fall-back repeats."""
        first = local.replace(tzinfo=None).replace(tzinfo=self._zone, fold=0)
        return first.utcoffset() != local.utcoffset()

    def _iterate(self, after: datetime) -> croniter | None:
        """Matches after ``after``; None when its local time is past year 9999 already."""
        try:
            return croniter(self.expr, after.astimezone(self._zone))
        except OverflowError:
            return None

    def _next(self, it: croniter | None) -> datetime | None:
        """The iterator's next occurrence in UTC; None when the calendar ends first."""
        if it is None:
            return None
        while True:
            try:
                local: datetime = it.get_next(datetime)
            except (CroniterBadDateError, ValueError, OverflowError):  # past year 9999
                return None
            if self._runs_hourly_or_more or not self._is_repeated_wall_time(local):
                try:
                    return local.astimezone(UTC)
                except OverflowError:
                    return None

    def first_at_or_after(self, start: datetime) -> datetime:
        """The first matching time at or after ``start``: a cron task starting "now"
        runs at its first match, not now.

        InvalidTaskError when there is none before the calendar ends (year 9999); a
        task cannot start that way (``TaskSpec`` checks it for starts that late).
        """
        first = self.next_after(max(start, _CALENDAR_START) - timedelta(microseconds=1))
        if first is None:
            raise InvalidTaskError(
                f"the cron schedule {self.expr!r} has no run after {start:%Y-%m-%d %H:%M} "
                "UTC: the calendar ends in year 9999; choose an earlier start"
            )
        return first

    def next_after(
        self, scheduled_at: datetime, finished_at: datetime | None = None
    ) -> datetime | None:
        """The first match after ``scheduled_at``; None when the calendar ends first."""
        return _cron_next_after(self, max(scheduled_at, _CALENDAR_START))

    def catch_up(self, scheduled_at: datetime, now: datetime) -> CatchUp:
        it = self._iterate(max(scheduled_at, _CALENDAR_START))
        missed = 0
        while missed <= CATCH_UP_COUNT_CAP:
            occurrence = self._next(it)
            if occurrence is None or occurrence > now:
                return CatchUp(missed=missed, exact=True, next_at=occurrence)
            missed += 1
        return CatchUp(missed=CATCH_UP_COUNT_CAP, exact=False, next_at=self.next_after(now))

    def advance(self, scheduled_at: datetime, steps: int) -> datetime | None:
        it = self._iterate(max(scheduled_at, _CALENDAR_START))
        occurrence: datetime | None = scheduled_at
        for _ in range(steps):
            occurrence = self._next(it)
            if occurrence is None:
                break
        return occurrence

    def describe(self, *, with_zone: bool = True) -> str:
        options = Options()
        options.use_24hour_time_format = True
        try:
            text = str(get_description(self.expr, options))
        except Exception:  # cron_descriptor is stricter than croniter on a few forms
            text = f"cron {self.expr}"
        return f"{text} ({self.tz})" if with_zone else text


@lru_cache(maxsize=4096)
def _cron_next_after(cron: Cron, after: datetime) -> datetime | None:
    """Memoised: croniter takes ~0.2 ms per answer, and the same question comes twice
    for every new task (the store's initial row and the engine's first slot) and once
    per task sharing a schedule and start in a bulk import."""
    return cron._next(cron._iterate(after))


Recurrence: TypeAlias = Once | Every | Cron
