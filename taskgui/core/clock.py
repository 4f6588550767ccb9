"""Time sources. The only module that reads the system clock.

Everything that depends on time takes a :class:`Clock`, so tests can substitute a
:class:`FakeClock` and advance it instead of sleeping. A clock gives two readings on
purpose: wall time (aware UTC, for schedules a person reads) and monotonic time (for
measuring waits, immune to clock jumps). Comparing the two is how the runtime notices a
clock jump or a resume from sleep.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime, timedelta
from typing import Protocol


class Clock(Protocol):
    """A source of wall time and monotonic time."""

    def now(self) -> datetime:
        """Current wall time as an aware UTC datetime."""
        ...

    def monotonic(self) -> float:
        """Seconds on a clock that never jumps; only differences are meaningful."""
        ...


class SystemClock:
    """The real clocks of this machine."""

    def now(self) -> datetime:
        return datetime.now(UTC)

    def monotonic(self) -> float:
        return time.monotonic()


class FakeClock:
    """A clock that moves only when told to: the way tests let time pass.

    ``advance`` moves wall and monotonic time together (time passing normally);
    ``jump_wall`` moves only the wall clock (an NTP correction, a user changing the
    time, a laptop waking from sleep as seen by a monotonic clock that paused).
    """

    def __init__(self, start: datetime | None = None, monotonic_start: float = 1000.0) -> None:
        start = start or datetime(2026, 1, 1, 12, 0, tzinfo=UTC)
        if start.tzinfo is None:
            raise ValueError("FakeClock needs an aware start time")
        self._now = start.astimezone(UTC)
        self._monotonic = monotonic_start

    def now(self) -> datetime:
        return self._now

    def monotonic(self) -> float:
        return self._monotonic

    def advance(self, delta: timedelta | float) -> datetime:
        """Let ``delta`` (a timedelta or seconds) pass on both clocks; return the new now."""
        seconds = delta.total_seconds() if isinstance(delta, timedelta) else float(delta)
        if seconds < 0:
            raise ValueError("time does not run backwards; use jump_wall for clock changes")
        self._now += timedelta(seconds=seconds)
        self._monotonic += seconds
        return self._now

    def jump_wall(self, delta: timedelta) -> datetime:
        """Move only the wall clock, as a clock change or a resume from sleep looks."""
        self._now += delta
        return self._now
