"""Times as the stores keep them: integer microseconds since the epoch (UTC), exact.

Python's datetime holds microseconds and SQLite and PostgreSQL hold 64-bit integers,
so nothing is rounded on the way in or out, and the order of times is the order of
their numbers.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_EPOCH = EPOCH


def to_us(value: datetime) -> int:
    """Aware datetime -> integer microseconds since the epoch (exact)."""
    delta = value - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def opt_to_us(value: datetime | None) -> int | None:
    return None if value is None else to_us(value)


def from_us(value: int) -> datetime:
    return _EPOCH + timedelta(0, 0, value)  # (days, seconds, microseconds)


def opt_from_us(value: int | None) -> datetime | None:
    return None if value is None else _EPOCH + timedelta(0, 0, value)
