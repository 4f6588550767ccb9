"""Human durations: parse what a person types, format what a person reads."""

from __future__ import annotations

from datetime import timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from taskgui.core.duration import describe_interval, format_duration, parse_duration
from taskgui.core.errors import InvalidTaskError

# ------------------------------------------------------------------ parse_duration


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("30s", timedelta(seconds=30)),
        ("5m", timedelta(minutes=5)),
        ("1h30m", timedelta(hours=1, minutes=30)),
        ("2d", timedelta(days=2)),
        ("1w", timedelta(weeks=1)),
        ("90", timedelta(seconds=90)),
        ("1.5h", timedelta(hours=1, minutes=30)),
        (" 2h 5m ", timedelta(hours=2, minutes=5)),
        ("250ms", timedelta(milliseconds=250)),
        ("1m30s", timedelta(minutes=1, seconds=30)),  # 'm' then 's', not 'ms'
        ("5 m", timedelta(minutes=5)),
        ("1H30M", timedelta(hours=1, minutes=30)),
        ("1w2d3h4m5s", timedelta(weeks=1, days=2, hours=3, minutes=4, seconds=5)),
        ("0.5", timedelta(milliseconds=500)),
        ("0s", timedelta(0)),
    ],
)
def test_parse_duration(text: str, expected: timedelta) -> None:
    assert parse_duration(text) == expected


@pytest.mark.parametrize(
    "text", ["", "   ", "abc", "5x", "-5m", "1h30", "h", "5m-", "1.h", "1e3s", "five minutes"]
)
def test_parse_duration_rejects_garbage_with_an_example(text: str) -> None:
    with pytest.raises(InvalidTaskError) as caught:
        parse_duration(text)
    message = str(caught.value)
    assert repr(text) in message  # says what it could not read
    assert "write it like 30s, 5m, 1h30m or 2d" in message  # and how to write it


def test_parse_duration_rejects_a_duration_too_long_to_represent() -> None:
    with pytest.raises(InvalidTaskError, match="too long"):
        parse_duration("99999999999999s")


@pytest.mark.parametrize("text", ["99999999999999", "9" * 400])
def test_parse_duration_rejects_a_huge_bare_number(text: str) -> None:
    with pytest.raises(InvalidTaskError, match="too long"):
        parse_duration(text)


_UNITS = (("d", 86_400, 999), ("h", 3_600, 23), ("m", 60, 59), ("s", 1, 59))


@given(
    st.lists(
        st.tuples(st.sampled_from(range(len(_UNITS))), st.integers(min_value=1, max_value=999)),
        min_size=1,
        max_size=2,
        unique_by=lambda pair: pair[0],
    )
)
def test_format_then_parse_round_trips_values_with_at_most_two_units(
    parts: list[tuple[int, int]],
) -> None:
    total = 0
    for index, count in parts:
        _, size, largest = _UNITS[index]
        total += size * min(count, largest)
    delta = timedelta(seconds=total)
    text = format_duration(delta)
    assert parse_duration(text) == delta
    assert parse_duration(text.replace(" ", "")) == delta


# ------------------------------------------------------------------ format_duration


@pytest.mark.parametrize(
    ("delta", "text"),
    [
        (timedelta(hours=1, minutes=30), "1h 30m"),
        (timedelta(seconds=45), "45s"),
        (timedelta(days=2, hours=3), "2d 3h"),
        (timedelta(minutes=5), "5m"),
        (timedelta(0), "0s"),
        (timedelta(milliseconds=250), "250ms"),
        (timedelta(days=1, hours=2, minutes=3, seconds=4), "1d 2h"),  # the two largest units
        (timedelta(days=1, seconds=30), "1d 30s"),
        (timedelta(seconds=59.6), "1m"),  # rounded to whole seconds
        (timedelta(minutes=-5), "-5m"),
        (timedelta(days=400), "400d"),
    ],
)
def test_format_duration(delta: timedelta, text: str) -> None:
    assert format_duration(delta) == text


# ------------------------------------------------------------------ describe_interval


@pytest.mark.parametrize(
    ("delta", "text"),
    [
        (timedelta(minutes=5), "5 minutes"),
        (timedelta(hours=1, minutes=30), "1 hour 30 minutes"),
        (timedelta(days=1), "day"),
        (timedelta(hours=1), "hour"),
        (timedelta(minutes=1), "minute"),
        (timedelta(seconds=1), "second"),
        (timedelta(days=2), "2 days"),
        (timedelta(seconds=90), "1 minute 30 seconds"),
        (timedelta(days=1, seconds=1), "1 day 1 second"),
        (timedelta(days=7), "7 days"),
        (timedelta(milliseconds=250), "250 milliseconds"),
    ],
)
def test_describe_interval(delta: timedelta, text: str) -> None:
    assert describe_interval(delta) == text
