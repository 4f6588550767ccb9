"""No duration a person can enter makes the date arithmetic of a schedule overflow.

Every duration is bounded at validation (about 100 years), and where a schedule still
reaches the end of the calendar (year 9999) it ends there: "no further occurrence",
never an OverflowError. Before this, ``--every 999999999d`` was accepted and every
later start of the scheduler failed with "internal error: OverflowError".
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from taskgui.core.duration import MAX_DURATION, check_duration, parse_duration
from taskgui.core.engine.engine import Engine
from taskgui.core.errors import InvalidTaskError
from taskgui.core.events import RunDispatched
from taskgui.core.recurrence import Cron, Every, EveryMode
from taskgui.core.retry import Backoff, RetryPolicy
from taskgui.core.states import RunOutcome
from taskgui.core.task import Command, TaskSpec
from tests.helpers.factories import T0, make_spec

TOO_LONG = MAX_DURATION + timedelta(seconds=1)
END = datetime.max.replace(tzinfo=UTC)
LAST_YEAR = datetime(9999, 1, 1, tzinfo=UTC)
ZONES = ["UTC", "Pacific/Kiritimati", "America/New_York", "Pacific/Pago_Pago"]

# ------------------------------------------------------------------ the bound


def test_a_hundred_years_is_the_longest_duration_typed() -> None:
    assert parse_duration("36525d") == MAX_DURATION
    for text in ("36526d", "999999999d", "5219w", "9" * 400):
        with pytest.raises(InvalidTaskError, match="too long; taskgui takes at most 100 years"):
            parse_duration(text)


def test_a_refused_duration_is_not_echoed_in_full() -> None:
    with pytest.raises(InvalidTaskError) as caught:
        parse_duration("9" * 5_000)
    assert len(str(caught.value)) < 200


def test_check_duration_names_the_field() -> None:
    assert check_duration(MAX_DURATION, "the timeout") == MAX_DURATION
    with pytest.raises(InvalidTaskError, match=r"^the timeout must be at most 100 years$"):
        check_duration(TOO_LONG, "the timeout")
    with pytest.raises(InvalidTaskError, match="must be a duration"):
        check_duration(5, "the timeout")


@pytest.mark.parametrize(
    ("build", "phrase"),
    [
        (lambda: Every(TOO_LONG), "the repeat interval must be at most 100 years"),
        (
            lambda: RetryPolicy(base_delay=TOO_LONG, max_delay=TOO_LONG),
            "the first retry delay must be at most 100 years",
        ),
        (
            lambda: RetryPolicy(max_delay=timedelta(days=999_999_999)),
            "the maximum retry delay must be at most 100 years",
        ),
        (
            lambda: RetryPolicy(backoff=Backoff.FIXED, base_delay=TOO_LONG, max_delay=TOO_LONG),
            "first retry delay must be at most 100 years",
        ),
        (lambda: make_spec(timeout=TOO_LONG), "the timeout must be at most 100 years"),
        (
            lambda: make_spec(misfire_grace=timedelta(days=999_999_999)),
            "the misfire grace period must be at most 100 years",
        ),
    ],
)
def test_every_duration_of_a_task_is_bounded(build: Any, phrase: str) -> None:
    with pytest.raises(InvalidTaskError, match=phrase):
        build()


def test_the_longest_durations_are_accepted() -> None:
    spec = make_spec(
        recurrence=Every(MAX_DURATION),
        retry=RetryPolicy(base_delay=MAX_DURATION, max_delay=MAX_DURATION),
        timeout=MAX_DURATION,
        misfire_grace=MAX_DURATION,
    )
    assert spec.recurrence == Every(MAX_DURATION)


# ------------------------------------------------------ the end of the calendar


def test_an_interval_past_the_end_of_the_calendar_is_no_further_occurrence() -> None:
    every = Every(MAX_DURATION)
    late = datetime(9950, 1, 1, tzinfo=UTC)

    assert every.next_after(late) is None
    assert Every(MAX_DURATION, EveryMode.FIXED_DELAY).next_after(late, late) is None
    assert every.catch_up(late - MAX_DURATION, late).next_at is None
    assert every.catch_up(late, late - timedelta(1)).next_at is None
    assert every.advance(late, 1) is None
    assert every.advance(datetime.min.replace(tzinfo=UTC), 10**30) is None


@pytest.mark.parametrize("zone", ZONES)
def test_a_cron_schedule_ends_with_the_calendar(zone: str) -> None:
    cron = Cron("* * * * *", zone)
    near_end = END - timedelta(minutes=30)

    assert cron.next_after(END - timedelta(microseconds=1)) is None
    caught_up = cron.catch_up(near_end, END)
    assert caught_up.next_at is None
    assert cron.advance(near_end, 10**6) is None


@pytest.mark.parametrize("zone", ZONES)
def test_a_cron_schedule_at_the_start_of_the_calendar_runs_from_its_second_day(
    zone: str,
) -> None:
    cron = Cron("0 12 * * *", zone)
    first = cron.first_at_or_after(datetime.min.replace(tzinfo=UTC))

    assert datetime(1, 1, 2, tzinfo=UTC) <= first < datetime(1, 1, 4, tzinfo=UTC)
    caught_up = cron.catch_up(datetime.min.replace(tzinfo=UTC), datetime(1, 1, 10, tzinfo=UTC))
    assert caught_up.missed >= 6 and caught_up.next_at is not None


def test_a_cron_task_that_could_never_run_is_refused() -> None:
    with pytest.raises(InvalidTaskError, match=r"has no run after 9999-12-31 .* year 9999"):
        make_spec(recurrence=Cron("0 0 1 1 *"), first_run_at=datetime(9999, 12, 31, tzinfo=UTC))
    # One that still has a run before the end is fine.
    spec = make_spec(recurrence=Cron("0 0 1 12 *"), first_run_at=LAST_YEAR)
    assert spec.recurrence.first_at_or_after(spec.first_run_at) == datetime(9999, 12, 1, tzinfo=UTC)


@given(
    interval=st.timedeltas(min_value=timedelta(seconds=1), max_value=MAX_DURATION),
    start=st.datetimes(timezones=st.just(UTC)),
    now=st.datetimes(timezones=st.just(UTC)),
    mode=st.sampled_from(list(EveryMode)),
    steps=st.integers(0, 2**64),
)
def test_no_interval_and_start_make_every_raise(
    interval: timedelta, start: datetime, now: datetime, mode: EveryMode, steps: int
) -> None:
    every = Every(interval, mode)
    every.next_after(start, now)
    caught_up = every.catch_up(start, now)
    assert caught_up.next_at is None or caught_up.next_at > now
    every.advance(start, steps)


@settings(max_examples=50, deadline=None)
@given(
    start=st.datetimes(min_value=datetime(9999, 12, 1), timezones=st.just(UTC))
    | st.datetimes(max_value=datetime(1, 1, 3), timezones=st.just(UTC)),
    zone=st.sampled_from(ZONES),
    expr=st.sampled_from(["* * * * *", "0 0 * * *", "*/7 3 * * 1-5", "0 0 31 12 *"]),
)
def test_no_start_at_either_end_of_the_calendar_makes_cron_raise(
    start: datetime, zone: str, expr: str
) -> None:
    cron = Cron(expr, zone)
    cron.next_after(start)
    cron.catch_up(start, start + min(timedelta(hours=3), END - start))
    cron.advance(start, 50)


# ------------------------------------------------------------------ the engine


def _run_once(engine: Engine, now: datetime, outcome: RunOutcome) -> None:
    [run] = [event for event in engine.due(now, 1) if isinstance(event, RunDispatched)]
    engine.finished(run.run.run_id, outcome, now)


def test_a_task_whose_next_run_is_past_the_calendar_runs_and_ends() -> None:
    start = datetime(9950, 1, 1, tzinfo=UTC)
    engine = Engine()
    engine.add(make_spec(recurrence=Every(MAX_DURATION), first_run_at=start))

    _run_once(engine, start, RunOutcome.SUCCEEDED)

    assert engine.next_deadline() is None
    assert engine.snapshot(1).status.next_run_at is None


def test_the_longest_retry_delay_after_a_failure_is_scheduled() -> None:
    spec = TaskSpec(
        id=1,
        name="flaky",
        command=Command(line="false"),
        first_run_at=T0,
        retry=RetryPolicy(backoff=Backoff.FIXED, base_delay=MAX_DURATION, max_delay=MAX_DURATION),
    )
    engine = Engine()
    engine.add(spec)

    _run_once(engine, T0, RunOutcome.FAILED)

    assert engine.next_deadline() == T0 + MAX_DURATION
