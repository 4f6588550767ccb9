"""When a task runs again: ``Once``, ``Every`` and ``Cron``.

A recurrence is a small pure value. The engine asks it for the occurrence after a
scheduled time (``next_after``) and, when a task is found late, how many occurrences
were missed and where the schedule goes on (``catch_up``). Fixed-rate schedules add the
interval to the *scheduled* time, never to the finish time, so a task that always
finishes late never drifts.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta, tzinfo
from enum import StrEnum
from functools import cached_property
from typing import TypeAlias
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from taskgui.core.cron.dst import next_fire
from taskgui.core.cron.grammar import CronFields, parse_fields, split_expression
from taskgui.core.cron.matching import CronCalendar
from taskgui.core.cron.memo import FireMemo
from taskgui.core.cron.text import describe_fields
from taskgui.core.duration import check_duration, describe_interval
from taskgui.core.errors import InvalidTaskError

MIN_INTERVAL = timedelta(seconds=1)
# Cron looks at local wall time, and at the very start of the calendar a zone west of
# UTC has none (0001-01-01 00:00 UTC is year 0 in New York). A day in, every zone has.
_CALENDAR_START = datetime(1, 1, 2, tzinfo=UTC)
# How many cron occurrences catch_up counts one by one before it gives an estimate;
# a minutely cron after a year of downtime would otherwise cost half a million steps.
CATCH_UP_COUNT_CAP = 10_000


@dataclass(frozen=True, slots=True)
class CatchUp:
    """What a late occurrence missed: ``missed`` occurrences after it up to now.

    ``exact`` is False when counting stopped at the cap (``missed`` is then a lower
    bound). ``next_at`` is the first occurrence after now (None: the schedule ended).
    """

    missed: int
    exact: bool
    next_at: datetime | None


class _NoFurtherRuns:
    """The answers of a schedule with no run after its first: ``Once``, and a stored
    cron schedule that cannot run (``RefusedCron``)."""

    __slots__ = ()

    def first_at_or_after(self, start: datetime) -> datetime:
        return start

    def next_after(self, scheduled_at: datetime, finished_at: datetime | None = None) -> None:
        return None

    def catch_up(self, scheduled_at: datetime, now: datetime) -> CatchUp:
        return CatchUp(missed=0, exact=True, next_at=None)

    def advance(self, scheduled_at: datetime, steps: int) -> None:
        return None


@dataclass(frozen=True, slots=True)
class Once(_NoFurtherRuns):
    """Runs a single time, at the task's first run time."""

    is_recurring = False
    refusal = None

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
    refusal = None

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
    """Return the 5-field form of ``expr`` (macros expanded), or raise InvalidTaskError
    naming the field that cron would refuse."""
    fields = split_expression(expr)
    parse_fields(fields)
    return " ".join(fields)


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

    The expression means what it means to cronie (``taskgui.core.cron.grammar``): the
    same fields, names and steps, the day-of-month/day-of-week AND/OR rule, and the
    same refusals. Daylight saving time as in cronie's ``cron.c``
    (``taskgui.core.cron.dst``): a job is *wildcard* when its minute or hour field
    starts with ``*``, otherwise *fixed-time*. At a spring-forward gap a fixed-time
    job whose time was skipped runs right after the gap and a wildcard job skips the
    missing times; at a fall-back a fixed-time job runs once (in the first pass) and a
    wildcard job runs through both passes as the wall clock shows them.

    One deliberate difference: where several times of a fixed-time job fall in one
    gap (``15,45 2 * * *``), cronie launches it once per time, all at once; taskgui
    runs it once. ``tests/core/test_cron_dst.py`` holds the choice.
    """

    expr: str
    tz: str = "UTC"

    is_recurring = True

    def __post_init__(self) -> None:
        if not isinstance(self.expr, str):
            raise InvalidTaskError("the cron expression must be text like '0 9 * * 1-5'")
        fields = split_expression(self.expr)
        parsed = parse_fields(fields)
        object.__setattr__(self, "expr", " ".join(fields))
        object.__setattr__(self, "_fields", parsed)
        load_zone(self.tz)
        if self._calendar.next_match(_PROBE) is None:
            raise InvalidTaskError(
                f"the cron expression {self.expr!r} never matches (no such day exists)"
            )

    @property
    def refusal(self) -> str | None:
        """Why this schedule cannot run (None: it can); see ``RefusedCron``."""
        return None

    @property
    def fields(self) -> CronFields:
        """The parsed expression."""
        parsed: CronFields = self.__dict__["_fields"]
        return parsed

    @property
    def wildcard(self) -> bool:
        """cronie's wildcard job: the minute or hour field starts with ``*``."""
        return self.fields.wildcard

    @cached_property
    def _calendar(self) -> CronCalendar:
        return CronCalendar(self.fields)

    @cached_property
    def _zone(self) -> tzinfo:
        # UTC has no DST; the plain timezone takes cron_dst's shortcut.
        return UTC if self.tz in _UTC_NAMES else load_zone(self.tz)

    @cached_property
    def _memo(self) -> FireMemo:
        return FireMemo()

    def _next(self, after: datetime) -> datetime | None:
        after = max(after, _CALENDAR_START)  # no zone has local time before it
        memo = self._memo
        found = memo.get(after)
        if found is not None:
            return found
        try:
            found = next_fire(self._calendar, self.fields.wildcard, self._zone, after)
        except OverflowError:  # local time past year 9999 (a zone east of UTC): no more
            return None
        if found is not None:
            memo.put(after, found)
        return found

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
        """The first run strictly after ``scheduled_at`` (None after the year 9999)."""
        return self._next(scheduled_at)

    def catch_up(self, scheduled_at: datetime, now: datetime) -> CatchUp:
        missed = 0
        occurrence = self._next(scheduled_at)
        while occurrence is not None and occurrence <= now:
            missed += 1
            if missed > CATCH_UP_COUNT_CAP:
                return CatchUp(missed=CATCH_UP_COUNT_CAP, exact=False, next_at=self.next_after(now))
            occurrence = self._next(occurrence)
        return CatchUp(missed=missed, exact=True, next_at=occurrence)

    def advance(self, scheduled_at: datetime, steps: int) -> datetime | None:
        occurrence: datetime | None = scheduled_at
        for _ in range(steps):
            if occurrence is None:
                return None
            occurrence = self._next(occurrence)
        return occurrence

    def describe(self, *, with_zone: bool = True) -> str:
        text = describe_fields(self.fields)
        return f"{text} ({self.tz})" if with_zone else text


@dataclass(frozen=True)
class RefusedCron(_NoFurtherRuns, Cron):
    """A stored cron schedule that this taskgui refuses (an older one accepted it).

    Kept, never run: the task is loaded paused (``TaskSpec`` sees ``refusal``), its
    schedule text says why and what to do, and resuming it is refused until the
    schedule is edited. Its expression and zone stay exactly as stored, so nothing
    is lost and the row is written back unchanged.
    """

    reason: str = ""

    def __post_init__(self) -> None:
        pass  # taken as stored: the point is not to judge it again

    @property
    def refusal(self) -> str:
        return self.reason

    def describe(self, *, with_zone: bool = True) -> str:
        zone = f" ({self.tz})" if with_zone else ""
        return (
            f"not running: cron {self.expr!r}{zone} is refused: {self.reason}. "
            "Edit the schedule, then resume the task"
        )


def stored_cron(expr: str, tz: str) -> Cron:
    """A stored cron schedule: a ``Cron``, or a ``RefusedCron`` saying why not.

    For what the store reads back, never for what a person enters: a task saved by an
    older taskgui with an expression this one refuses must survive a start.
    """
    if not isinstance(expr, str) or not isinstance(tz, str):
        raise InvalidTaskError("a stored cron schedule needs a text expression and zone")
    try:
        return Cron(expr, tz)
    except InvalidTaskError as error:
        return RefusedCron(expr, tz, str(error))


_PROBE = datetime(2000, 1, 1)
_UTC_NAMES = frozenset({"UTC", "Etc/UTC"})


Recurrence: TypeAlias = Once | Every | Cron
