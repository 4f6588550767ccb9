"""Where a zone's UTC offset changes (DST and other changes), found to the minute."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from zoneinfo import ZoneInfo

MINUTE = timedelta(minutes=1)


@dataclass(frozen=True)
class Change:
    """One change of a zone's offset: the first instant of the new offset."""

    zone: str
    at: datetime
    before: timedelta
    after: timedelta

    @property
    def is_gap(self) -> bool:
        return self.after > self.before


@cache
def changes(zone: str, year: int) -> tuple[Change, ...]:
    """The zone's changes of offset in that year, each found to the minute."""
    tz = ZoneInfo(zone)

    def offset(moment: datetime) -> timedelta:
        value = moment.astimezone(tz).utcoffset()
        assert value is not None
        return value

    found: list[Change] = []
    moment = datetime(year, 1, 1, tzinfo=UTC)
    while moment.year == year:
        later = moment + timedelta(hours=6)
        if offset(later) != offset(moment):
            low, high = moment, later  # the offset changes in (low, high]
            while high - low > MINUTE:
                middle = low + (high - low) / 2
                middle -= timedelta(seconds=middle.second, microseconds=middle.microsecond)
                low, high = (low, middle) if offset(middle) != offset(low) else (middle, high)
            found.append(Change(zone, high, offset(low), offset(high)))
        moment = later
    return tuple(found)
