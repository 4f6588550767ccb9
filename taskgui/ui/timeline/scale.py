"""The time axis: which moment each pixel column shows, zoom and scroll.

Pure (no Qt) so the arithmetic is tested on its own. A scale is the moment at x = 0
and a number of seconds per pixel; zooming keeps the moment under the pointer where it
is, as every map does. The zoom is bounded: from a second per pixel (a minute across
60 px) to about five weeks across a wide window.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime, timedelta

MIN_SECONDS_PER_PX = 1.0
MAX_SECONDS_PER_PX = 3_600.0  # an hour a pixel: five weeks across 840 px
PRESETS = {"hours": timedelta(hours=6), "day": timedelta(days=1), "week": timedelta(days=7)}
# Tick steps, smallest first, with how their labels read.
_STEPS: tuple[tuple[timedelta, str], ...] = (
    (timedelta(minutes=1), "%H:%M"),
    (timedelta(minutes=5), "%H:%M"),
    (timedelta(minutes=15), "%H:%M"),
    (timedelta(minutes=30), "%H:%M"),
    (timedelta(hours=1), "%H:%M"),
    (timedelta(hours=3), "%H:%M"),
    (timedelta(hours=6), "%a %H:%M"),
    (timedelta(hours=12), "%a %H:%M"),
    (timedelta(days=1), "%a %d %b"),
    (timedelta(days=7), "%d %b"),
)
MIN_TICK_PX = 70


@dataclass(frozen=True, slots=True)
class TimeScale:
    start: datetime  # aware: the moment at x = 0
    seconds_per_px: float

    def __post_init__(self) -> None:
        clamped = min(max(self.seconds_per_px, MIN_SECONDS_PER_PX), MAX_SECONDS_PER_PX)
        object.__setattr__(self, "seconds_per_px", clamped)

    @classmethod
    def showing(cls, span: timedelta, width: int, start: datetime) -> TimeScale:
        return cls(start, span.total_seconds() / max(width, 1))

    def x_of(self, moment: datetime) -> float:
        return (moment - self.start).total_seconds() / self.seconds_per_px

    def time_at(self, x: float) -> datetime:
        return self.start + timedelta(seconds=x * self.seconds_per_px)

    def end(self, width: int) -> datetime:
        return self.time_at(width)

    def span(self, width: int) -> timedelta:
        return timedelta(seconds=width * self.seconds_per_px)

    def zoomed(self, factor: float, anchor_x: float) -> TimeScale:
        """``factor`` > 1 zooms in (fewer seconds a pixel); the moment at ``anchor_x``
        stays at ``anchor_x``."""
        anchor = self.time_at(anchor_x)
        spp = min(max(self.seconds_per_px / factor, MIN_SECONDS_PER_PX), MAX_SECONDS_PER_PX)
        return TimeScale(anchor - timedelta(seconds=anchor_x * spp), spp)

    def scrolled(self, dx_px: float) -> TimeScale:
        """Moved ``dx_px`` pixels later (negative: earlier)."""
        return replace(self, start=self.time_at(dx_px))

    def centred_on(self, moment: datetime, width: int, at: float = 0.25) -> TimeScale:
        """``moment`` at ``at`` of the width (the "now" view shows some past too)."""
        return replace(self, start=moment - timedelta(seconds=width * at * self.seconds_per_px))

    def ticks(self, width: int, local: bool = True) -> list[tuple[float, str]]:
        """Tick positions and labels, at least ``MIN_TICK_PX`` apart, on round local
        times (an hour tick at 14:00, a day tick at local midnight)."""
        step, fmt = _STEPS[-1]
        for candidate, candidate_fmt in _STEPS:
            if candidate.total_seconds() / self.seconds_per_px >= MIN_TICK_PX:
                step, fmt = candidate, candidate_fmt
                break
        first = self.start.astimezone() if local else self.start
        seconds = step.total_seconds()
        if step >= timedelta(days=1):
            moment = first.replace(hour=0, minute=0, second=0, microsecond=0)
        else:
            since_midnight = (
                first - first.replace(hour=0, minute=0, second=0, microsecond=0)
            ).total_seconds()
            moment = first - timedelta(seconds=since_midnight % seconds, microseconds=0)
            moment = moment.replace(microsecond=0)
        end = self.end(width)
        out: list[tuple[float, str]] = []
        while moment <= end and len(out) < 400:
            x = self.x_of(moment)
            if x >= 0:
                out.append((x, moment.strftime(fmt)))
            moment = (moment + step).astimezone() if local else moment + step
        return out
