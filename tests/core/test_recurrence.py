"""Recurrences: Once, Every (fixed rate / fixed delay) and Cron, including DST."""

from __future__ import annotations

import dataclasses
import itertools
import random
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from taskgui.core import recurrence
from taskgui.core.errors import InvalidTaskError
from taskgui.core.recurrence import CatchUp, Cron, Every, EveryMode, Once, normalize_cron
from tests.helpers.cron import runs_between

T0 = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)  # a Thursday
MINUTE = timedelta(minutes=1)
HOUR = timedelta(hours=1)
BERLIN = ZoneInfo("Europe/Berlin")
NEW_YORK = ZoneInfo("America/New_York")


def local(zone: ZoneInfo, wall: datetime, *, fold: int = 0) -> datetime:
    """A naive wall time in ``zone`` as UTC; ``fold=1`` picks the second instance."""
    return wall.replace(tzinfo=zone, fold=fold).astimezone(UTC)


# ------------------------------------------------------------------ Once


def test_once_never_recurs() -> None:
    once: Once | Every | Cron = Once()
    assert once.is_recurring is False
    assert once.next_after(T0) is None
    assert once.next_after(T0, T0 + HOUR) is None
    assert once.advance(T0, 3) is None
    assert once.describe() == "once"


def test_once_catch_up_reports_nothing_missed_and_no_next_run() -> None:
    assert Once().catch_up(T0, T0 + timedelta(days=400)) == CatchUp(
        missed=0, exact=True, next_at=None
    )


# ------------------------------------------------------------------ Every: construction


@pytest.mark.parametrize(
    ("interval", "phrase"),
    [
        (timedelta(0), "at least 1 second"),
        (timedelta(milliseconds=999), "at least 1 second"),
        (timedelta(seconds=-5), "at least 1 second"),
        (5, "must be a duration"),
        ("5m", "must be a duration"),
    ],
)
def test_every_rejects_bad_intervals(interval: Any, phrase: str) -> None:
    with pytest.raises(InvalidTaskError, match=phrase):
        Every(interval)


def test_every_accepts_the_minimum_interval_and_coerces_a_mode_string() -> None:
    mode: Any = "fixed_delay"
    every = Every(timedelta(seconds=1), mode)
    assert every.mode is EveryMode.FIXED_DELAY
    assert Every(timedelta(seconds=1)).mode is EveryMode.FIXED_RATE
    assert every.is_recurring is True


def test_every_is_a_frozen_value() -> None:
    every = Every(HOUR)
    with pytest.raises(dataclasses.FrozenInstanceError):
        every.interval = MINUTE  # type: ignore[misc]
    assert every == Every(HOUR, EveryMode.FIXED_RATE)
    assert hash(every) == hash(Every(HOUR))


# ------------------------------------------------------------------ Every: next_after


def test_fixed_rate_never_drifts_when_every_run_finishes_late() -> None:
    interval = timedelta(minutes=5)
    every = Every(interval, EveryMode.FIXED_RATE)
    rng = random.Random(20260101)
    first = T0 + timedelta(microseconds=123_457)  # an awkward start must not matter either
    scheduled = first
    for index in range(1, 1001):
        # Each run takes about 90% of the interval, sometimes a little longer than it.
        finished_at = scheduled + interval * (0.9 + rng.uniform(-0.1, 0.15))
        following = every.next_after(scheduled, finished_at)
        assert following is not None
        assert following - scheduled == interval
        assert following == first + interval * index
        scheduled = following
    assert scheduled - first == interval * 1000


def test_fixed_delay_measures_from_the_finish_of_the_previous_run() -> None:
    interval = timedelta(minutes=10)
    every = Every(interval, EveryMode.FIXED_DELAY)
    finished_at = T0 + timedelta(minutes=7, seconds=3)
    assert every.next_after(T0, finished_at) == finished_at + interval
    # The drift adds up, which is the point of fixed delay.
    scheduled = T0
    for _ in range(100):
        finished_at = scheduled + timedelta(minutes=1)
        following = every.next_after(scheduled, finished_at)
        assert following is not None
        scheduled = following
    assert scheduled == T0 + timedelta(minutes=11) * 100


def test_fixed_delay_without_a_finish_time_falls_back_to_the_scheduled_time() -> None:
    assert Every(HOUR, EveryMode.FIXED_DELAY).next_after(T0) == T0 + HOUR


def test_fixed_rate_ignores_the_finish_time() -> None:
    assert Every(HOUR).next_after(T0, T0 + timedelta(hours=5)) == T0 + HOUR


@pytest.mark.parametrize("mode", list(EveryMode))
def test_every_advance_moves_whole_intervals(mode: EveryMode) -> None:
    every = Every(timedelta(minutes=15), mode)
    assert every.advance(T0, 0) == T0
    assert every.advance(T0, 1) == T0 + timedelta(minutes=15)
    assert every.advance(T0, 96) == T0 + timedelta(days=1)


# ------------------------------------------------------------------ Every: catch_up


@pytest.mark.parametrize(
    ("late_by", "missed", "next_at"),
    [
        (timedelta(0), 0, T0 + timedelta(minutes=10)),
        (timedelta(seconds=1), 0, T0 + timedelta(minutes=10)),
        (timedelta(minutes=10), 1, T0 + timedelta(minutes=20)),  # on the grid: counted
        (timedelta(minutes=35), 3, T0 + timedelta(minutes=40)),
        (timedelta(days=1), 144, T0 + timedelta(days=1, minutes=10)),
    ],
)
def test_every_catch_up_examples(late_by: timedelta, missed: int, next_at: datetime) -> None:
    for mode in EveryMode:
        result = Every(timedelta(minutes=10), mode).catch_up(T0, T0 + late_by)
        assert result == CatchUp(missed=missed, exact=True, next_at=next_at)


@settings(max_examples=300)
@given(
    scheduled=st.datetimes(
        min_value=datetime(2000, 1, 1),
        max_value=datetime(2100, 1, 1),
        timezones=st.just(UTC),
    ),
    interval=st.timedeltas(min_value=timedelta(seconds=1), max_value=timedelta(days=30)),
    late_by=st.timedeltas(min_value=timedelta(0), max_value=timedelta(days=365 * 50)),
    mode=st.sampled_from(EveryMode),
)
def test_every_catch_up_lands_on_the_first_grid_point_after_now(
    scheduled: datetime, interval: timedelta, late_by: timedelta, mode: EveryMode
) -> None:
    now = scheduled + late_by
    every = Every(interval, mode)
    result = every.catch_up(scheduled, now)
    assert result.exact is True
    assert result.next_at is not None
    assert result.next_at > now
    assert (result.next_at - scheduled) % interval == timedelta(0)
    assert result.next_at - interval <= now  # no grid point after now is skipped
    # missed = the grid points scheduled + k * interval with k >= 1 that are <= now
    assert scheduled + interval * result.missed <= now
    assert scheduled + interval * (result.missed + 1) > now
    assert result.next_at == scheduled + interval * (result.missed + 1)
    assert every.advance(scheduled, result.missed + 1) == result.next_at


def test_every_catch_up_counts_by_brute_force_too() -> None:
    interval = timedelta(seconds=7)
    every = Every(interval)
    for late_seconds in range(0, 200, 3):
        now = T0 + timedelta(seconds=late_seconds)
        grid = [T0 + interval * k for k in range(1, 100)]
        expected = sum(1 for point in grid if point <= now)
        result = every.catch_up(T0, now)
        assert result.missed == expected
        assert result.next_at == min(point for point in grid if point > now)


def test_every_catch_up_is_exact_for_very_long_spans() -> None:
    interval = timedelta(days=7)
    scheduled = datetime(2000, 1, 3, tzinfo=UTC)
    now = scheduled + interval * 20_000 - timedelta(microseconds=1)
    result = Every(interval).catch_up(scheduled, now)
    assert result.missed == 19_999
    assert result.next_at == scheduled + interval * 20_000


# ------------------------------------------------------------------ Cron: basics


def test_cron_next_after_in_utc() -> None:
    weekdays = Cron("0 9 * * 1-5")
    thursday_10 = datetime(2026, 1, 1, 10, 0, tzinfo=UTC)
    friday_9 = datetime(2026, 1, 2, 9, 0, tzinfo=UTC)
    monday_9 = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)
    assert weekdays.next_after(thursday_10) == friday_9
    assert weekdays.next_after(friday_9) == monday_9  # strictly after, never the same time
    every_five = Cron("*/5 * * * *")
    assert every_five.next_after(T0 + timedelta(minutes=3, seconds=10)) == T0 + timedelta(minutes=5)
    assert every_five.next_after(T0 + timedelta(seconds=0.5)) == T0 + timedelta(minutes=5)


def test_cron_returns_aware_utc() -> None:
    result = Cron("0 9 * * *", "Europe/Berlin").next_after(T0)
    assert result is not None and result.tzinfo is UTC


def test_cron_ignores_the_finish_time() -> None:
    cron = Cron("0 * * * *")
    assert cron.next_after(T0, T0 + timedelta(hours=5)) == T0 + HOUR


@pytest.mark.parametrize(
    ("tz", "after", "expected"),
    [
        ("Europe/Berlin", datetime(2026, 1, 15, tzinfo=UTC), datetime(2026, 1, 15, 8, tzinfo=UTC)),
        ("Europe/Berlin", datetime(2026, 7, 15, tzinfo=UTC), datetime(2026, 7, 15, 7, tzinfo=UTC)),
        (
            "America/New_York",
            datetime(2026, 1, 15, tzinfo=UTC),
            datetime(2026, 1, 15, 14, tzinfo=UTC),
        ),
        (
            "America/New_York",
            datetime(2026, 7, 15, tzinfo=UTC),
            datetime(2026, 7, 15, 13, tzinfo=UTC),
        ),
        (
            "Asia/Kolkata",
            datetime(2026, 1, 15, tzinfo=UTC),
            datetime(2026, 1, 15, 3, 30, tzinfo=UTC),
        ),
    ],
)
def test_cron_runs_on_the_local_wall_clock_of_its_zone(
    tz: str, after: datetime, expected: datetime
) -> None:
    assert Cron("0 9 * * *", tz).next_after(after) == expected


def test_cron_day_and_weekday_fields_across_a_zone_date_line() -> None:
    # 23:30 on Mondays in New York is already Tuesday in UTC.
    cron = Cron("30 23 * * 1", "America/New_York")
    assert cron.next_after(T0) == datetime(2026, 1, 6, 4, 30, tzinfo=UTC)


@pytest.mark.parametrize(
    ("macro", "expanded", "after", "expected"),
    [
        ("@yearly", "0 0 1 1 *", T0, datetime(2027, 1, 1, tzinfo=UTC)),
        ("@annually", "0 0 1 1 *", T0, datetime(2027, 1, 1, tzinfo=UTC)),
        ("@monthly", "0 0 1 * *", T0, datetime(2026, 2, 1, tzinfo=UTC)),
        ("@weekly", "0 0 * * 0", T0, datetime(2026, 1, 4, tzinfo=UTC)),  # Sunday
        ("@daily", "0 0 * * *", T0, datetime(2026, 1, 2, tzinfo=UTC)),
        ("@midnight", "0 0 * * *", T0, datetime(2026, 1, 2, tzinfo=UTC)),
        ("@hourly", "0 * * * *", T0, T0 + HOUR),
        ("  @daily ", "0 0 * * *", T0, datetime(2026, 1, 2, tzinfo=UTC)),
    ],
)
def test_cron_macros(macro: str, expanded: str, after: datetime, expected: datetime) -> None:
    assert normalize_cron(macro) == expanded
    cron = Cron(macro)
    assert cron.expr == expanded
    assert cron.next_after(after) == expected


def test_cron_expression_is_normalised_so_equal_schedules_compare_equal() -> None:
    assert Cron("0   9 *\t* 1-5 ").expr == "0 9 * * 1-5"
    assert Cron("0   9 * * 1-5") == Cron("0 9 * * 1-5")
    assert hash(Cron("@daily")) == hash(Cron("0 0 * * *"))
    assert Cron("0 9 * * *", "Europe/Berlin") != Cron("0 9 * * *")


def test_cron_is_frozen() -> None:
    cron = Cron("0 9 * * *")
    with pytest.raises(dataclasses.FrozenInstanceError):
        cron.expr = "* * * * *"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("expr", "tz", "phrase"),
    [
        ("0 0 * * * *", "UTC", r"5 fields \(minute hour day month weekday\).*has 6"),
        ("every day at nine", "UTC", r"5 fields"),
        ("a b c d e", "UTC", r"^the minute field 'a': 'a' is not a number; write 0-59"),
        ("61 * * * *", "UTC", r"^minute 61 is not in 0-59$"),
        ("0 25 * * *", "UTC", r"^hour 25 is not in 0-23$"),
        ("*/0 * * * *", "UTC", r"^the minute field '\*/0': a step of 0 never advances"),
        ("@reboot", "UTC", r"@reboot is not a time schedule"),
        ("@fortnightly", "UTC", r"unknown cron macro '@fortnightly'; use one of .*@daily"),
        ("0 0 30 2 *", "UTC", r"'0 0 30 2 \*' never matches"),
        ("0 0 31 4 *", "UTC", r"never matches"),
        ("", "UTC", r"empty; write it like '0 9 \* \* 1-5'"),
        ("   ", "UTC", r"empty"),
        ("0 9 * * *", "Mars/Olympus_Mons", r"unknown time zone 'Mars/Olympus_Mons'; use an IANA"),
        ("0 9 * * *", "", r"time zone is empty"),
        ("0 9 * * *", "../../etc/passwd", r"unknown time zone"),
    ],
)
def test_cron_rejects_invalid_input_with_an_actionable_message(
    expr: str, tz: str, phrase: str
) -> None:
    with pytest.raises(InvalidTaskError, match=phrase):
        Cron(expr, tz)


def test_cron_rejects_a_zone_directory_name() -> None:
    with pytest.raises(InvalidTaskError, match="unknown time zone 'Europe'"):
        Cron("0 9 * * *", "Europe")


def test_feb_29_is_not_never_matching() -> None:
    cron = Cron("0 0 29 2 *")
    assert cron.next_after(T0) == datetime(2028, 2, 29, tzinfo=UTC)


# ------------------------------------------------------------------ Cron: DST


@pytest.mark.parametrize(
    ("zone", "gap_day"),
    [(BERLIN, date(2026, 3, 29)), (NEW_YORK, date(2026, 3, 8))],
)
def test_cron_time_in_the_spring_forward_gap_runs_right_after_the_gap(
    zone: ZoneInfo, gap_day: date
) -> None:
    cron = Cron("30 2 * * *", zone.key)
    noon = datetime.combine(gap_day, time(12), tzinfo=zone)
    runs = runs_between(cron, noon - timedelta(days=1), noon + timedelta(days=2))
    day = timedelta(days=1)
    assert [run.astimezone(zone).replace(tzinfo=None) for run in runs] == [
        datetime.combine(gap_day, time(3, 0)),  # 02:30 does not exist: first valid moment
        datetime.combine(gap_day + day, time(2, 30)),
        datetime.combine(gap_day + 2 * day, time(2, 30)),
    ]
    # Real time from the previous day's 02:30 (CET) to the gap run at 03:00 (CEST).
    previous = cron.next_after(noon - timedelta(days=2))
    assert previous is not None
    assert runs[0] - previous == timedelta(hours=23, minutes=30)


def test_berlin_spring_forward_in_utc_terms() -> None:
    cron = Cron("30 2 * * *", "Europe/Berlin")
    assert cron.next_after(datetime(2026, 3, 28, 12, tzinfo=UTC)) == datetime(
        2026, 3, 29, 1, 0, tzinfo=UTC
    )
    assert cron.next_after(datetime(2026, 3, 29, 1, 0, tzinfo=UTC)) == datetime(
        2026, 3, 30, 0, 30, tzinfo=UTC
    )


@pytest.mark.parametrize(
    ("zone", "expr", "fall_back_day", "expected_utc"),
    [
        (BERLIN, "30 2 * * *", date(2026, 10, 25), datetime(2026, 10, 25, 0, 30, tzinfo=UTC)),
        (NEW_YORK, "30 1 * * *", date(2026, 11, 1), datetime(2026, 11, 1, 5, 30, tzinfo=UTC)),
    ],
)
def test_cron_repeated_wall_time_runs_exactly_once(
    zone: ZoneInfo, expr: str, fall_back_day: date, expected_utc: datetime
) -> None:
    cron = Cron(expr, zone.key)
    noon = datetime.combine(fall_back_day, time(12), tzinfo=zone)
    runs = runs_between(cron, noon - timedelta(days=2), noon + timedelta(days=2))
    on_the_day = [run for run in runs if run.astimezone(zone).date() == fall_back_day]
    assert on_the_day == [expected_utc]  # the first instance, not the second
    assert len(runs) == 4  # one a day on the days around it too
    # Asked from between the two instances, it does not run the second one either.
    between = expected_utc + timedelta(minutes=45)
    following = cron.next_after(between)
    assert following is not None and following.astimezone(zone).date() > fall_back_day


@pytest.mark.parametrize(
    ("zone", "first_start", "second_end"),
    [
        # 02:00 first instance (CEST) .. 02:30 second instance (CET)
        (
            BERLIN,
            local(BERLIN, datetime(2026, 10, 25, 2, 0)),
            local(BERLIN, datetime(2026, 10, 25, 2, 30), fold=1),
        ),
        # 01:00 first instance (EDT) .. 01:30 second instance (EST)
        (
            NEW_YORK,
            local(NEW_YORK, datetime(2026, 11, 1, 1, 0)),
            local(NEW_YORK, datetime(2026, 11, 1, 1, 30), fold=1),
        ),
    ],
)
def test_half_hourly_cron_runs_every_30_real_minutes_through_the_repeated_hour(
    zone: ZoneInfo, first_start: datetime, second_end: datetime
) -> None:
    cron = Cron("*/30 * * * *", zone.key)
    runs = runs_between(cron, first_start - MINUTE, second_end)
    assert len(runs) == 4
    assert runs[0] == first_start
    assert runs[-1] == second_end
    assert all(b - a == timedelta(minutes=30) for a, b in itertools.pairwise(runs))
    # The same wall times appear twice, with two different offsets.
    walls = [run.astimezone(zone).strftime("%H:%M") for run in runs]
    assert walls[:2] == walls[2:]
    # And the real-time cadence holds across the whole night.
    night = runs_between(cron, first_start - timedelta(hours=3), second_end + timedelta(hours=3))
    assert all(b - a == timedelta(minutes=30) for a, b in itertools.pairwise(night))


def _cron_field(spec: str, low: int, high: int) -> set[int]:
    values: set[int] = set()
    for part in spec.split(","):
        base, _, step_text = part.partition("/")
        step = int(step_text) if step_text else 1
        if base == "*":
            first, last = low, high
        elif "-" in base:
            first, last = (int(bound) for bound in base.split("-"))
        else:
            first = last = int(base)
        values.update(range(first, last + 1, step))
    return values


def _reference_runs(expr: str, zone: ZoneInfo, start: datetime, end: datetime) -> list[datetime]:
    """The documented DST rules, minute by minute, for '<minute> <hour> * * *' forms.

    A matching wall time runs at its real instant; if it falls in a spring-forward gap
    it runs at the first instant after the gap (once, however many gap times match);
    the second instance of a repeated wall time runs only when the minute or hour field
    starts with '*' (cronie's rule: such a job is about elapsed time).
    """
    minute_spec, hour_spec = expr.split(" ")[:2]
    minutes, hours = _cron_field(minute_spec, 0, 59), _cron_field(hour_spec, 0, 23)
    hour_wildcard = hour_spec == "*"
    elapsed_time_job = minute_spec.startswith("*") or hour_spec.startswith("*")
    runs: set[datetime] = set()
    instant = start
    previous_offset: timedelta | None = None
    while instant <= end:
        wall = instant.astimezone(zone)
        offset = wall.utcoffset()
        assert offset is not None
        naive = wall.replace(tzinfo=None)
        if previous_offset is not None and offset > previous_offset and not hour_wildcard:
            skipped = naive - (offset - previous_offset)
            while skipped < naive:
                if skipped.minute in minutes and skipped.hour in hours:
                    runs.add(instant)
                skipped += MINUTE
        if wall.minute in minutes and wall.hour in hours:
            first_offset = naive.replace(tzinfo=zone, fold=0).utcoffset()
            if elapsed_time_job or first_offset == offset:
                runs.add(instant)
        previous_offset = offset
        instant += MINUTE
    return sorted(runs)


@pytest.mark.parametrize(
    "expr",
    ["30 2 * * *", "15,45 2 * * *", "*/20 1-3 * * *", "*/30 * * * *", "15 * * * *", "0 3 * * *"],
)
@pytest.mark.parametrize(
    ("zone", "day"),
    [
        (BERLIN, datetime(2026, 3, 29)),
        (BERLIN, datetime(2026, 10, 25)),
        (NEW_YORK, datetime(2026, 3, 8)),
        (NEW_YORK, datetime(2026, 11, 1)),
    ],
)
def test_cron_matches_a_minute_by_minute_model_of_the_dst_rules(
    expr: str, zone: ZoneInfo, day: datetime
) -> None:
    start = datetime(day.year, day.month, day.day, tzinfo=zone).astimezone(UTC) - timedelta(days=1)
    end = start + timedelta(days=3)
    expected = _reference_runs(expr, zone, start, end)
    cron = Cron(expr, zone.key)
    after = start
    while after < expected[-1]:
        assert cron.next_after(after) == next(run for run in expected if run > after), after
        after += timedelta(minutes=7)


# ------------------------------------------------------------------ Cron: catch_up


def test_cron_catch_up_counts_missed_occurrences_and_finds_the_next() -> None:
    hourly = Cron("0 * * * *")
    assert hourly.catch_up(T0, T0 + timedelta(hours=3, minutes=30)) == CatchUp(
        missed=3, exact=True, next_at=T0 + timedelta(hours=4)
    )
    # An occurrence exactly at now counts as missed; the next one is after now.
    assert hourly.catch_up(T0, T0 + timedelta(hours=3)) == CatchUp(
        missed=3, exact=True, next_at=T0 + timedelta(hours=4)
    )
    assert hourly.catch_up(T0, T0 + timedelta(minutes=59)) == CatchUp(
        missed=0, exact=True, next_at=T0 + HOUR
    )


def test_cron_catch_up_across_dst_counts_real_occurrences() -> None:
    half_hourly = Cron("*/30 * * * *", "Europe/Berlin")
    scheduled = local(BERLIN, datetime(2026, 10, 25, 1, 30))
    now = local(BERLIN, datetime(2026, 10, 25, 2, 45), fold=1)
    result = half_hourly.catch_up(scheduled, now)
    assert result == CatchUp(
        missed=4, exact=True, next_at=local(BERLIN, datetime(2026, 10, 25, 3, 0))
    )
    daily = Cron("30 2 * * *", "Europe/Berlin")
    result = daily.catch_up(
        local(BERLIN, datetime(2026, 10, 24, 2, 30)), local(BERLIN, datetime(2026, 10, 27, 12))
    )
    assert result == CatchUp(
        missed=3, exact=True, next_at=datetime(2026, 10, 28, 1, 30, tzinfo=UTC)
    )


def test_cron_catch_up_stops_counting_at_the_cap(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(recurrence, "CATCH_UP_COUNT_CAP", 5)
    minutely = Cron("* * * * *")
    now = T0 + timedelta(hours=2, seconds=30)
    assert minutely.catch_up(T0, now) == CatchUp(
        missed=5, exact=False, next_at=T0 + timedelta(hours=2, minutes=1)
    )
    # Below the cap the count stays exact.
    assert minutely.catch_up(T0, T0 + timedelta(minutes=3, seconds=1)) == CatchUp(
        missed=3, exact=True, next_at=T0 + timedelta(minutes=4)
    )


def test_cron_catch_up_after_a_year_of_downtime_is_bounded_and_lands_after_now() -> None:
    minutely = Cron("* * * * *")
    now = T0 + timedelta(days=365, seconds=1)
    result = minutely.catch_up(T0, now)
    assert result.exact is False
    assert result.missed == recurrence.CATCH_UP_COUNT_CAP
    assert result.next_at == T0 + timedelta(days=365, minutes=1)


def test_cron_advance_steps_through_occurrences() -> None:
    hourly = Cron("0 * * * *")
    assert hourly.advance(T0, 0) == T0
    assert hourly.advance(T0, 3) == T0 + timedelta(hours=3)
    weekdays = Cron("0 9 * * 1-5")
    assert weekdays.advance(T0, 2) == datetime(2026, 1, 5, 9, tzinfo=UTC)


# ------------------------------------------------------------------ describe


@pytest.mark.parametrize(
    ("schedule", "text"),
    [
        (Every(timedelta(minutes=5)), "every 5 minutes"),
        (Every(HOUR), "every hour"),
        (Every(timedelta(days=2)), "every 2 days"),
        (
            Every(timedelta(hours=1, minutes=30), EveryMode.FIXED_DELAY),
            "every 1 hour 30 minutes after the previous run finishes",
        ),
        (Cron("0 9 * * 1-5", "Europe/Berlin"), "At 09:00, Monday through Friday (Europe/Berlin)"),
        (Cron("@daily"), "At 00:00 (UTC)"),
        (Once(), "once"),
    ],
)
def test_describe(schedule: Once | Every | Cron, text: str) -> None:
    assert schedule.describe() == text


def test_cron_describe_without_zone() -> None:
    cron = Cron("0 9 * * 1-5", "Europe/Berlin")
    assert cron.describe(with_zone=False) == "At 09:00, Monday through Friday"
