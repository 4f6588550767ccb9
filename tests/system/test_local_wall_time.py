"""A local time given without an offset (``taskgui add --at 2027-03-28T02:30``) read by
the zone's rules, DST gaps and repeated hours as cron has them.

A trial gave Berlin's 02:30 on the night its clocks go from 02:00 to 03:00: libc's
``mktime`` made it 01:30, an hour before the time typed. The reference is zoneinfo's
own reading of the same wall time, and the CLI's argument is checked through it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime

import pytest

from taskgui.cli.add_arguments import datetime_arg
from taskgui.system.local_zone import local_wall_time


@pytest.fixture
def berlin(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TZ", "Europe/Berlin")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.parametrize(
    ("typed", "utc"),
    [
        ("2027-03-28T02:30", datetime(2027, 3, 28, 1, 30, tzinfo=UTC)),  # the gap: 03:30 CEST
        ("2027-03-28T03:30", datetime(2027, 3, 28, 1, 30, tzinfo=UTC)),  # the same moment
        ("2027-10-31T02:30", datetime(2027, 10, 31, 0, 30, tzinfo=UTC)),  # first pass, CEST
        ("2027-06-01T12:00", datetime(2027, 6, 1, 10, 0, tzinfo=UTC)),
        ("2027-01-15T08:00", datetime(2027, 1, 15, 7, 0, tzinfo=UTC)),
        ("2027-03-28T02:30+05:00", datetime(2027, 3, 27, 21, 30, tzinfo=UTC)),  # an offset wins
    ],
)
def test_a_local_time_is_read_by_the_zones_rules(berlin: None, typed: str, utc: datetime) -> None:
    assert datetime_arg(typed) == utc


def test_the_gap_is_never_read_as_an_earlier_time(berlin: None) -> None:
    typed = datetime(2027, 3, 28, 2, 30)
    placed = local_wall_time(typed)
    assert placed.astimezone(UTC) == datetime(2027, 3, 28, 1, 30, tzinfo=UTC)
    assert placed.astimezone(UTC) > datetime(2027, 3, 28, 0, 59, tzinfo=UTC)  # after 02:00 CET


def test_a_tz_the_named_zone_does_not_follow_keeps_libcs_reading(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A review: with TZ a POSIX rule (JST-9) the zone found by name may be another
    (the /etc/localtime link); in its gap its reading won, hours off libc's clocks."""
    monkeypatch.setenv("TZ", "JST-9")
    time.tzset()
    try:
        typed = datetime(2027, 3, 28, 2, 30)
        assert local_wall_time(typed).astimezone(UTC) == typed.astimezone().astimezone(UTC)
        assert local_wall_time(typed).astimezone(UTC) == datetime(2027, 3, 27, 17, 30, tzinfo=UTC)
    finally:
        monkeypatch.undo()
        time.tzset()
