"""Retry policies: capped exponential backoff, fixed, none; jitter; validation."""

from __future__ import annotations

import dataclasses
import math
import random
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from taskgui.core.errors import InvalidTaskError
from taskgui.core.retry import (
    DEFAULT_BASE_DELAY,
    DEFAULT_MAX_DELAY,
    MAX_ATTEMPTS_LIMIT,
    Backoff,
    RetryPolicy,
)

SECOND = timedelta(seconds=1)
HOUR = timedelta(hours=1)


def seconds(*values: float) -> list[timedelta]:
    return [timedelta(seconds=value) for value in values]


# ------------------------------------------------------------------ defaults and sequences


def test_defaults() -> None:
    policy = RetryPolicy()
    assert policy.backoff is Backoff.EXPONENTIAL
    assert policy.max_attempts == 3
    assert policy.base_delay == DEFAULT_BASE_DELAY == timedelta(seconds=10)
    assert policy.max_delay == DEFAULT_MAX_DELAY == HOUR
    assert policy.factor == 2.0
    assert policy.jitter is False
    assert policy.retries is True


def test_exponential_sequence_doubles_from_ten_seconds_and_stops_at_the_cap() -> None:
    policy = RetryPolicy(max_attempts=15)
    delays = [policy.next_delay(attempt) for attempt in range(1, 15)]
    assert delays == seconds(
        10, 20, 40, 80, 160, 320, 640, 1280, 2560, 3600, 3600, 3600, 3600, 3600
    )


def test_exponential_with_another_factor_and_cap() -> None:
    policy = RetryPolicy(
        max_attempts=6, base_delay=SECOND, factor=3.0, max_delay=timedelta(seconds=50)
    )
    assert [policy.next_delay(attempt) for attempt in range(1, 6)] == seconds(1, 3, 9, 27, 50)


def test_factor_one_keeps_the_base_delay() -> None:
    policy = RetryPolicy(max_attempts=1000, factor=1.0)
    assert {policy.next_delay(attempt) for attempt in range(1, 1000)} == {DEFAULT_BASE_DELAY}


def test_next_delay_gives_up_at_the_last_attempt() -> None:
    policy = RetryPolicy(max_attempts=3)
    assert policy.next_delay(1) == timedelta(seconds=10)
    assert policy.next_delay(2) == timedelta(seconds=20)
    assert policy.next_delay(3) is None
    assert policy.next_delay(4) is None
    assert policy.next_delay(10**9) is None


def test_a_single_attempt_never_retries() -> None:
    policy = RetryPolicy(max_attempts=1)
    assert policy.retries is False
    assert policy.next_delay(1) is None
    assert policy.preview() == []


def test_backoff_none_never_retries_whatever_the_attempt_limit() -> None:
    policy = RetryPolicy(backoff=Backoff.NONE, max_attempts=5)
    assert policy.retries is False
    assert [policy.next_delay(attempt) for attempt in range(1, 7)] == [None] * 6
    assert policy.preview() == []


def test_no_retry_constructor() -> None:
    policy = RetryPolicy.no_retry()
    assert policy.backoff is Backoff.NONE
    assert policy.max_attempts == 1
    assert policy.next_delay(1) is None


def test_fixed_backoff_repeats_the_base_delay() -> None:
    policy = RetryPolicy(backoff=Backoff.FIXED, max_attempts=5, base_delay=timedelta(seconds=30))
    assert [policy.next_delay(attempt) for attempt in range(1, 6)] == [
        *seconds(30, 30, 30, 30),
        None,
    ]


def test_attempts_are_numbered_from_one() -> None:
    with pytest.raises(ValueError, match="from 1"):
        RetryPolicy().next_delay(0)


def test_backoff_string_is_coerced_to_the_enum() -> None:
    backoff: Any = "fixed"
    assert RetryPolicy(backoff=backoff).backoff is Backoff.FIXED


def test_policy_is_frozen_and_compares_by_value() -> None:
    policy = RetryPolicy(max_attempts=4)
    with pytest.raises(dataclasses.FrozenInstanceError):
        policy.max_attempts = 5  # type: ignore[misc]
    assert policy == RetryPolicy(max_attempts=4)
    assert hash(policy) == hash(RetryPolicy(max_attempts=4))
    assert dataclasses.replace(policy, max_attempts=5).next_delay(4) == timedelta(seconds=80)


# ------------------------------------------------------------------ cap and overflow safety


def test_never_exceeds_the_cap_nor_raises_for_ten_thousand_attempts() -> None:
    policy = RetryPolicy(max_attempts=MAX_ATTEMPTS_LIMIT)
    for attempt in range(1, 10_001):
        raw = policy.raw_delay(attempt)
        assert DEFAULT_BASE_DELAY <= raw <= HOUR
        delay = policy.next_delay(attempt)
        if attempt < MAX_ATTEMPTS_LIMIT:
            assert delay == raw
        else:
            assert delay is None


@pytest.mark.parametrize("attempt", [100_000, 10**9, 10**18, 2**200])
def test_huge_attempt_numbers_are_at_the_cap(attempt: int) -> None:
    assert RetryPolicy().raw_delay(attempt) == HOUR
    assert RetryPolicy(factor=1.0001, base_delay=SECOND).raw_delay(attempt) == HOUR


@settings(max_examples=300)
@given(
    attempt=st.one_of(
        st.integers(min_value=1, max_value=10_000),
        st.integers(min_value=1, max_value=10**30),
    ),
    base_ms=st.integers(min_value=1, max_value=86_400_000),
    cap_extra_ms=st.integers(min_value=0, max_value=30 * 86_400_000),
    factor=st.one_of(st.just(1.0), st.floats(min_value=1.0, max_value=1_000.0, allow_nan=False)),
)
def test_raw_delay_matches_the_capped_formula_for_any_attempt(
    attempt: int, base_ms: int, cap_extra_ms: int, factor: float
) -> None:
    base = timedelta(milliseconds=base_ms)
    cap = base + timedelta(milliseconds=cap_extra_ms)
    policy = RetryPolicy(base_delay=base, max_delay=cap, factor=factor, max_attempts=1000)
    raw = policy.raw_delay(attempt)
    assert base <= raw <= cap
    # The formula, computed the slow way in log space so it cannot overflow.
    log_growth = (attempt - 1) * math.log(factor)
    at_cap = log_growth >= math.log(cap / base)
    expected = cap if at_cap else min(base * math.exp(log_growth), cap)
    tolerance = max(timedelta(microseconds=1), expected * 1e-12)
    assert abs(raw - expected) <= tolerance
    # Growth never goes backwards.
    assert policy.raw_delay(attempt + 1) >= raw
    if attempt < policy.max_attempts:
        assert policy.next_delay(attempt) == raw


# ------------------------------------------------------------------ jitter


def test_jitter_stays_between_half_and_the_full_delay_and_is_reproducible() -> None:
    policy = RetryPolicy(max_attempts=12, jitter=True)
    rng = random.Random(7)
    first = [policy.next_delay(attempt, rng) for attempt in range(1, 12)]
    rng = random.Random(7)
    again = [policy.next_delay(attempt, rng) for attempt in range(1, 12)]
    assert first == again
    for attempt, delay in enumerate(first, start=1):
        raw = policy.raw_delay(attempt)
        assert delay is not None
        assert raw * 0.5 <= delay <= raw
    assert all(delay != policy.raw_delay(attempt) for attempt, delay in enumerate(first, 1))


def test_different_seeds_give_different_jitter() -> None:
    policy = RetryPolicy(max_attempts=10, jitter=True)
    one = [policy.next_delay(attempt, random.Random(1)) for attempt in range(1, 10)]
    two = [policy.next_delay(attempt, random.Random(2)) for attempt in range(1, 10)]
    assert one != two


def test_jitter_without_a_random_source_is_the_plain_delay() -> None:
    policy = RetryPolicy(max_attempts=5, jitter=True)
    assert [policy.next_delay(attempt) for attempt in range(1, 5)] == seconds(10, 20, 40, 80)


def test_jitter_off_ignores_the_random_source() -> None:
    policy = RetryPolicy(max_attempts=5)
    rng = random.Random(3)
    assert [policy.next_delay(attempt, rng) for attempt in range(1, 5)] == seconds(10, 20, 40, 80)


@given(
    seed=st.integers(min_value=0, max_value=2**32),
    attempt=st.integers(min_value=1, max_value=999),
    backoff=st.sampled_from([Backoff.EXPONENTIAL, Backoff.FIXED]),
)
def test_jittered_delay_is_within_half_to_full_at_the_cap_too(
    seed: int, attempt: int, backoff: Backoff
) -> None:
    policy = RetryPolicy(backoff=backoff, max_attempts=1000, jitter=True)
    raw = policy.raw_delay(attempt)
    delay = policy.next_delay(attempt, random.Random(seed))
    assert delay is not None
    assert raw * 0.5 <= delay <= raw <= policy.max_delay
    assert delay == policy.next_delay(attempt, random.Random(seed))


def test_jitter_never_changes_give_up() -> None:
    policy = RetryPolicy(max_attempts=2, jitter=True)
    assert policy.next_delay(2, random.Random(0)) is None


# ------------------------------------------------------------------ validation


@pytest.mark.parametrize(
    ("kwargs", "phrase"),
    [
        ({"max_attempts": 0}, "between 1 and 1000, not 0"),
        ({"max_attempts": -3}, "between 1 and 1000"),
        ({"max_attempts": 1001}, "between 1 and 1000, not 1001"),
        ({"max_attempts": True}, "whole number"),
        ({"max_attempts": 2.5}, "whole number"),
        ({"max_attempts": "3"}, "whole number"),
        ({"base_delay": timedelta(0)}, "first retry delay must be longer than zero"),
        ({"base_delay": -SECOND}, "longer than zero"),
        (
            {"base_delay": timedelta(minutes=10), "max_delay": timedelta(minutes=5)},
            "maximum retry delay must be at least the first retry delay",
        ),
        ({"factor": 0.5}, "factor must be a number of at least 1"),
        ({"factor": 0.0}, "at least 1"),
        ({"factor": -2.0}, "at least 1"),
        ({"factor": math.nan}, "at least 1"),
        ({"factor": math.inf}, "at least 1"),
    ],
)
def test_invalid_policies_are_rejected_with_a_clear_message(
    kwargs: dict[str, Any], phrase: str
) -> None:
    with pytest.raises(InvalidTaskError, match=phrase):
        RetryPolicy(**kwargs)


def test_boundary_values_are_accepted() -> None:
    assert RetryPolicy(max_attempts=1).max_attempts == 1
    assert RetryPolicy(max_attempts=MAX_ATTEMPTS_LIMIT).max_attempts == MAX_ATTEMPTS_LIMIT
    equal = RetryPolicy(base_delay=HOUR, max_delay=HOUR, max_attempts=3)
    assert equal.preview() == [HOUR, HOUR]
    assert RetryPolicy(base_delay=timedelta(microseconds=1)).next_delay(1) == timedelta(
        microseconds=1
    )


# ------------------------------------------------------------------ preview


def test_preview_lists_each_retry_delay() -> None:
    assert RetryPolicy().preview() == seconds(10, 20)
    assert RetryPolicy(max_attempts=12).preview() == seconds(
        10, 20, 40, 80, 160, 320, 640, 1280, 2560, 3600, 3600
    )


def test_preview_count_limits_but_never_exceeds_the_attempts() -> None:
    policy = RetryPolicy(max_attempts=5)
    assert policy.preview(2) == seconds(10, 20)
    assert policy.preview(0) == []
    assert policy.preview(100) == seconds(10, 20, 40, 80)


def test_preview_ignores_jitter_and_matches_next_delay_without_rng() -> None:
    policy = RetryPolicy(max_attempts=8, jitter=True, backoff=Backoff.EXPONENTIAL)
    assert policy.preview() == [policy.next_delay(attempt) for attempt in range(1, 8)]


def test_preview_of_fixed_backoff() -> None:
    policy = RetryPolicy(backoff=Backoff.FIXED, max_attempts=4, base_delay=timedelta(minutes=2))
    assert policy.preview() == [timedelta(minutes=2)] * 3
