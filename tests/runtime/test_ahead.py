"""DispatchAhead's rules on a FakeClock: when a deadline may be dispatched ahead, and
for what moment dispatches are made until it has passed."""

from __future__ import annotations

from datetime import timedelta

import pytest

from taskgui.core.clock import FakeClock
from taskgui.runtime.ahead import DispatchAhead

LEAD = 0.005


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def ahead(clock: FakeClock) -> DispatchAhead:
    return DispatchAhead(clock, LEAD)


def target_in(clock: FakeClock, seconds: float) -> float:
    return clock.monotonic() + seconds


def test_a_deadline_within_the_lead_starts_at_its_own_time(
    clock: FakeClock, ahead: DispatchAhead
) -> None:
    deadline = clock.now() + timedelta(seconds=0.004)
    assert ahead.start_time(deadline, target_in(clock, 0.004)) == pytest.approx(
        target_in(clock, 0.004)
    )


def test_the_start_is_never_earlier_than_either_reckoning(
    clock: FakeClock, ahead: DispatchAhead
) -> None:
    # The head moved 3 ms later than the timer was armed for: start at the deadline.
    deadline = clock.now() + timedelta(seconds=0.005)
    assert ahead.start_time(deadline, target_in(clock, 0.002)) == pytest.approx(
        target_in(clock, 0.005)
    )
    # The timer reckons later than the wall clock says: start at the timer's.
    assert ahead.start_time(deadline, target_in(clock, 0.006)) == target_in(clock, 0.006)


def test_not_ahead_when_the_deadline_has_come_or_is_not_the_one_armed_for(
    clock: FakeClock, ahead: DispatchAhead
) -> None:
    assert ahead.start_time(clock.now(), clock.monotonic()) is None
    far = clock.now() + timedelta(seconds=1)
    assert ahead.start_time(far, target_in(clock, 0.004)) is None


def test_a_deadline_is_dispatched_ahead_once(clock: FakeClock, ahead: DispatchAhead) -> None:
    deadline = clock.now() + timedelta(seconds=0.004)
    start_at = ahead.start_time(deadline, target_in(clock, 0.004))
    assert start_at is not None
    ahead.hold(deadline, start_at)
    assert ahead.start_time(deadline, start_at) is None
    later = deadline + timedelta(seconds=0.001)
    assert ahead.start_time(later, start_at + 0.001) == pytest.approx(start_at + 0.001)


def test_until_a_held_deadline_passes_dispatches_are_made_for_it(
    clock: FakeClock, ahead: DispatchAhead
) -> None:
    assert ahead.moment(clock.now()) == (clock.now(), None)
    deadline = clock.now() + timedelta(seconds=0.004)
    start_at = target_in(clock, 0.004)
    ahead.hold(deadline, start_at)
    clock.advance(0.001)
    assert ahead.moment(clock.now()) == (deadline, start_at)
    clock.advance(0.0035)  # past its start time: the present again
    assert ahead.moment(clock.now()) == (clock.now(), None)


def test_a_wall_clock_set_back_during_the_hold_never_makes_the_engine_see_past_it(
    clock: FakeClock, ahead: DispatchAhead
) -> None:
    deadline = clock.now() + timedelta(seconds=0.004)
    start_at = target_in(clock, 0.004)
    ahead.hold(deadline, start_at)
    now = clock.jump_wall(timedelta(hours=-1))
    at, start = ahead.moment(now)
    assert at == now + timedelta(seconds=0.004) and start == start_at
    ahead.forget()
    assert ahead.moment(now) == (now, None)


def test_a_wall_clock_set_forward_during_the_hold_dispatches_for_the_deadline(
    clock: FakeClock, ahead: DispatchAhead
) -> None:
    deadline = clock.now() + timedelta(seconds=0.004)
    ahead.hold(deadline, target_in(clock, 0.004))
    now = clock.jump_wall(timedelta(hours=1))
    assert ahead.moment(now)[0] == deadline


def test_a_negative_lead_is_refused(clock: FakeClock) -> None:
    with pytest.raises(ValueError, match="lead"):
        DispatchAhead(clock, -1.0)
