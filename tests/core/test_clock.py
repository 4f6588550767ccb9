"""Clocks: the system clock gives aware UTC; the fake clock moves only when told."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from taskgui.core.clock import Clock, FakeClock, SystemClock

START = datetime(2026, 1, 1, 12, 0, tzinfo=UTC)


# ------------------------------------------------------------------ SystemClock


def test_system_clock_returns_aware_utc_now() -> None:
    clock: Clock = SystemClock()
    before = datetime.now(UTC)
    now = clock.now()
    after = datetime.now(UTC)
    assert now.tzinfo is UTC
    assert now.utcoffset() == timedelta(0)
    assert before <= now <= after


def test_system_clock_monotonic_never_goes_backwards() -> None:
    clock: Clock = SystemClock()
    readings = [clock.monotonic() for _ in range(1000)]
    assert readings == sorted(readings)


# ------------------------------------------------------------------ FakeClock


def test_fake_clock_starts_at_a_fixed_moment() -> None:
    clock: Clock = FakeClock()
    assert clock.now() == START
    assert clock.now().tzinfo is UTC
    assert clock.monotonic() == 1000.0


def test_fake_clock_stands_still_until_told() -> None:
    clock = FakeClock(START)
    assert [clock.now() for _ in range(3)] == [START] * 3
    assert [clock.monotonic() for _ in range(3)] == [1000.0] * 3


def test_fake_clock_converts_an_aware_start_to_utc() -> None:
    clock = FakeClock(datetime(2026, 1, 1, 13, 0, tzinfo=ZoneInfo("Europe/Berlin")), 5.0)
    assert clock.now() == START
    assert clock.now().tzinfo is UTC
    assert clock.monotonic() == 5.0


def test_fake_clock_refuses_a_naive_start() -> None:
    with pytest.raises(ValueError, match="aware"):
        FakeClock(datetime(2026, 1, 1, 12, 0))


def test_advance_moves_wall_and_monotonic_time_together() -> None:
    clock = FakeClock(START)
    returned = clock.advance(timedelta(minutes=5))
    assert returned == clock.now() == START + timedelta(minutes=5)
    assert clock.monotonic() == 1300.0
    clock.advance(2.5)  # plain seconds work too
    assert clock.now() == START + timedelta(minutes=5, seconds=2.5)
    assert clock.monotonic() == 1302.5
    clock.advance(0)
    assert clock.now() == START + timedelta(minutes=5, seconds=2.5)


@pytest.mark.parametrize("delta", [timedelta(seconds=-1), -0.001, -60])
def test_advance_backwards_raises_and_changes_nothing(delta: timedelta | float) -> None:
    clock = FakeClock(START)
    with pytest.raises(ValueError, match="jump_wall"):
        clock.advance(delta)
    assert clock.now() == START
    assert clock.monotonic() == 1000.0


def test_jump_wall_moves_only_the_wall_clock() -> None:
    clock = FakeClock(START)
    returned = clock.jump_wall(timedelta(hours=8))  # e.g. a laptop waking from sleep
    assert returned == clock.now() == START + timedelta(hours=8)
    assert clock.monotonic() == 1000.0
    clock.jump_wall(timedelta(hours=-9))  # a clock set back is allowed too
    assert clock.now() == START - timedelta(hours=1)
    assert clock.monotonic() == 1000.0


def test_wall_minus_monotonic_reveals_a_jump() -> None:
    clock = FakeClock(START)

    def skew() -> float:
        return (clock.now() - START).total_seconds() - (clock.monotonic() - 1000.0)

    clock.advance(timedelta(hours=1))
    assert skew() == 0.0
    clock.jump_wall(timedelta(minutes=-3))
    assert skew() == -180.0
