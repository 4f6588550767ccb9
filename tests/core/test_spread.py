"""Spread: offsets in range, stable per task when fixed, from the injected source."""

from __future__ import annotations

import random
from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from taskgui.core.errors import InvalidTaskError
from taskgui.core.spread import Spread, fixed_fraction

TEN_MINUTES = timedelta(minutes=10)


@given(task_id=st.integers(1, 2**63 - 1), draw=st.floats(0, 1, exclude_max=True))
def test_every_offset_is_inside_the_width(task_id: int, draw: float) -> None:
    for spread in (Spread(TEN_MINUTES), Spread(TEN_MINUTES, fixed=True)):
        offset = spread.offset(task_id, lambda: draw)
        assert timedelta(0) <= offset < TEN_MINUTES


def test_the_largest_draw_stays_below_the_width() -> None:
    just_below_one = 1 - 2**-53
    assert Spread(timedelta(days=1)).offset(1, lambda: just_below_one) < timedelta(days=1)


def test_a_random_spread_uses_the_injected_source() -> None:
    spread = Spread(TEN_MINUTES)
    first = [spread.offset(7, random.Random(42).random) for _ in range(3)]
    again = [spread.offset(7, random.Random(42).random) for _ in range(3)]
    assert first == again
    source = random.Random(1)
    assert len({spread.offset(7, source.random) for _ in range(50)}) == 50


def test_a_fixed_spread_is_stable_per_task_and_ignores_the_source() -> None:
    spread = Spread(TEN_MINUTES, fixed=True)

    def never() -> float:
        raise AssertionError("a fixed spread draws nothing")

    assert spread.offset(7, never) == spread.offset(7, never)
    # Pinned: the offset must not change between runs, machines or Python versions
    # (a stored task keeps its minute after an upgrade).
    assert fixed_fraction(1) == 0.7428094844981343
    assert fixed_fraction(2) == 0.14582778376420555


def test_a_batch_of_consecutive_ids_is_spread_evenly() -> None:
    """100 @hourly tasks created together fill the hour instead of clumping."""
    spread = Spread(timedelta(hours=1), fixed=True)
    minutes = [spread.offset(task_id, random.random).seconds // 60 for task_id in range(1, 101)]
    per_quarter = [sum(1 for m in minutes if q * 15 <= m < (q + 1) * 15) for q in range(4)]
    assert all(10 <= count <= 40 for count in per_quarter), per_quarter
    assert max(minutes.count(m) for m in set(minutes)) <= 6


@pytest.mark.parametrize(
    "width", [timedelta(0), timedelta(seconds=-1), timedelta(days=2), timedelta(days=999_999_999)]
)
def test_a_width_out_of_range_is_refused(width: timedelta) -> None:
    with pytest.raises(InvalidTaskError, match="spread"):
        Spread(width)


def test_describe() -> None:
    assert Spread(TEN_MINUTES).describe() == "spread over 10m"
    assert Spread(TEN_MINUTES, fixed=True).describe() == "spread over 10m (fixed per task)"
