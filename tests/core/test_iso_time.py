"""ISO 8601 as taskgui reads it: the usual forms, and nothing Python merely guesses at."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from zoneinfo import ZoneInfo

import pytest

from taskgui.core.iso_time import in_zone, read_iso


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-03-01T09:30", datetime(2026, 3, 1, 9, 30)),
        ("2026-03-01 09:30:15", datetime(2026, 3, 1, 9, 30, 15)),
        ("2026-03-01T09:30:00.5+01:00", datetime(2026, 3, 1, 9, 30, 0, 500_000,
                                                 timezone(timedelta(hours=1)))),
        ("20260301T093000Z", datetime(2026, 3, 1, 9, 30, tzinfo=UTC)),
        ("2026-03-01", datetime(2026, 3, 1)),
        ("  2026-03-01T09:30Z ", datetime(2026, 3, 1, 9, 30, tzinfo=UTC)),
    ],
)  # fmt: skip
def test_the_usual_forms_are_read(text: str, expected: datetime) -> None:
    assert read_iso(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "1" * 200,  # fromisoformat: 1111-11-11 11:11:11.111111
        "2026030111111111111",
        "2026-03-01T09:30:00.1234567",  # more than microseconds: silently cut by Python
        "2026-02-30T00:00",
        "2026-03-01T25:00",
        "tomorrow",
        "",
        "2026-03-01T09:30\x00",
        "\uff12\uff10\uff12\uff16-03-01",  # full-width digits: \d without ASCII takes them
    ],
)
def test_anything_else_is_refused(text: str) -> None:
    assert read_iso(text) is None


def test_in_zone_falls_back_to_utc_where_the_zone_would_leave_the_calendar() -> None:
    tokyo = ZoneInfo("Asia/Tokyo")
    end = datetime(9999, 12, 31, 23, 59, tzinfo=UTC)
    assert in_zone(end, tokyo) == (end, " UTC")
    assert in_zone(datetime(2026, 1, 1, tzinfo=UTC), tokyo) == (
        datetime(2026, 1, 1, 9, tzinfo=tokyo),
        "",
    )
