"""Reading an ISO 8601 date and time that a person or a file gave.

``datetime.fromisoformat`` reads far more than ISO 8601's usual forms: since Python 3.11
it takes the basic format without separators and fractions of any length, so a run of
200 digits reads as 1111-11-11 11:11:11.111111, silently. What taskgui accepts is the
extended form (``2026-03-01T09:30:00.5+01:00``) or the basic one (``20260301T093000Z``),
with a ``T`` or a space between date and time, at most six fraction digits, and an
optional offset; anything else is refused before Python guesses.
"""

from __future__ import annotations

import re
from datetime import datetime, tzinfo

_ISO = re.compile(
    r"\d{4}(?:-\d{2}-\d{2}|\d{4})"  # date: extended or basic
    r"(?:[T ]\d{2}(?::?\d{2}(?::?\d{2}(?:[.,]\d{1,6})?)?)?)?"  # time, to the microsecond
    r"(?:Z|[+-]\d{2}(?::?\d{2})?)?",  # offset
    re.ASCII,
)


def read_iso(text: str) -> datetime | None:
    """The moment ``text`` names (naive if it has no offset), or None if it is not one."""
    stripped = text.strip()
    if not _ISO.fullmatch(stripped):
        return None
    try:
        return datetime.fromisoformat(stripped)
    except ValueError:  # 2026-02-30, hour 25, ...
        return None


def in_zone(moment: datetime, tz: tzinfo | None = None) -> tuple[datetime, str]:
    """``moment`` in ``tz`` (None: this machine's zone) and "", or, where that time
    would fall outside the calendar (a run at 9999-12-31 23:59 UTC is in the year
    10000 in Tokyo), ``moment`` as it is (UTC) and " UTC" to say so where it is shown."""
    try:
        return moment.astimezone(tz), ""
    except (OverflowError, ValueError, OSError):
        return moment, " UTC"
