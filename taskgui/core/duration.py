"""Human durations: ``30s``, ``5m``, ``1h30m``, ``2d``, ``1w`` <-> timedelta.

Shared by the CLI flags, the task dialog and the human schedule text, so that what a
person types and what they read back use one grammar. Every way taskgui writes a
duration lives here too, one function per purpose: ``format_duration`` (two units, for
tables and logs), ``duration_text`` (exact, read back by ``parse_duration``),
``describe_interval`` (words, for schedules), ``countdown_text`` (time left, padded so a
ticking cell does not jitter), ``clock_text`` (a stopwatch) and ``ago_text``.

Every duration a person can give taskgui (a repeat interval, a retry delay or its cap,
a timeout, a misfire grace period) is at most ``MAX_DURATION``, about 100 years. The
bound is what keeps the date arithmetic of a schedule safe: ``datetime`` ends in year
9999, and a 999999999-day interval added to any time overflows. ``check_duration``
is the one place that says so, for every constructor that holds a duration.
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timedelta

from taskgui.core.errors import InvalidTaskError
from taskgui.core.text_rules import quoted

MAX_DURATION = timedelta(days=36_525)  # 100 years of 365.25 days
MAX_DURATION_TEXT = "100 years"

_UNIT_SECONDS = {"w": 604_800, "d": 86_400, "h": 3_600, "m": 60, "s": 1, "ms": 0.001}
_PART = re.compile(r"(\d+(?:\.\d+)?)\s*(ms|w|d|h|m|s)", re.IGNORECASE)
_WHOLE = re.compile(r"^\s*(?:\d+(?:\.\d+)?\s*(?:ms|w|d|h|m|s)\s*)+$", re.IGNORECASE)
JUST_NOW_SECONDS = 5
_DAY_S, _HOUR_S, _MINUTE_S = 86_400, 3_600, 60
_UNIT_WORDS = (("day", 86_400), ("hour", 3_600), ("minute", 60), ("second", 1))


def parse_duration(text: str) -> timedelta:
    """Parse ``"1h30m"``-style text; a bare number means seconds.

    Raises InvalidTaskError with an example of the accepted form when it cannot.
    """
    stripped = text.strip()
    if re.fullmatch(r"\d+(?:\.\d+)?", stripped):
        seconds = float(stripped)
    elif _WHOLE.match(stripped):
        seconds = sum(
            float(value) * _UNIT_SECONDS[unit.lower()] for value, unit in _PART.findall(stripped)
        )
    else:
        raise InvalidTaskError(
            f"cannot read {quoted(text)} as a duration; write it like 30s, 5m, 1h30m or 2d"
        )
    if seconds > MAX_DURATION.total_seconds():
        raise InvalidTaskError(
            f"the duration {quoted(stripped)} is too long; taskgui takes at most "
            f"{MAX_DURATION_TEXT}"
        )
    return timedelta(seconds=seconds)


def check_duration(value: object, what: str) -> timedelta:
    """``value`` if it is a timedelta of at most ``MAX_DURATION``; else InvalidTaskError.

    ``what`` names the duration for the message ("the repeat interval"). Lower bounds
    differ per field (zero, a second) and stay with each field's constructor.
    """
    if not isinstance(value, timedelta):
        raise InvalidTaskError(f"{what} must be a duration")
    if value > MAX_DURATION:
        raise InvalidTaskError(f"{what} must be at most {MAX_DURATION_TEXT}")
    return value


def format_duration(delta: timedelta) -> str:
    """Compact text for a duration: ``1h 30m``, ``45s``, ``2d 3h``; round to seconds.

    Shows at most the two largest non-zero units, which is what a person scanning a
    table wants; the exact value stays in the data.
    """
    if delta < timedelta(0):
        return "-" + format_duration(-delta)
    total = round(delta.total_seconds())
    if total == 0:
        milliseconds = delta.total_seconds() * 1000
        if milliseconds == 0:
            return "0s"
        return f"{round(milliseconds)}ms" if milliseconds >= 1 else "<1ms"
    parts: list[str] = []
    for suffix, size in (("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1)):
        count, total = divmod(total, size)
        if count:
            parts.append(f"{count}{suffix}")
    return " ".join(parts[:2])


def describe_interval(delta: timedelta) -> str:
    """Words for an interval: ``5 minutes``, ``1 hour 30 minutes``, ``day``."""
    total = round(delta.total_seconds())
    if total <= 0:
        return f"{delta.total_seconds() * 1000:g} milliseconds"
    words: list[str] = []
    for name, size in _UNIT_WORDS:
        count, total = divmod(total, size)
        if count:
            words.append(f"{count} {name}" + ("s" if count != 1 else ""))
    if len(words) == 1 and words[0].startswith("1 "):
        return words[0][2:]
    return " ".join(words)


def duration_text(delta: timedelta) -> str:
    """Exact text for a duration in the grammar ``parse_duration`` reads: ``1h30m``.

    Unlike ``format_duration`` (two units, rounded, for tables) this keeps every unit,
    so a duration shown in the dialog and read back is the same value.
    """
    if delta <= timedelta(0):
        return "0s"
    whole, micros = divmod(delta, timedelta(seconds=1))
    parts: list[str] = []
    for suffix, size in (("d", 86_400), ("h", 3_600), ("m", 60), ("s", 1)):
        count, whole = divmod(whole, size)
        if count:
            parts.append(f"{count}{suffix}")
    if micros:
        milliseconds = micros / timedelta(milliseconds=1)
        parts.append(f"{milliseconds:.3f}".rstrip("0").rstrip(".") + "ms")
    return "".join(parts)


def countdown_text(seconds: int) -> str:
    """Compact time left: ``45s``, ``4m 05s``, ``2h 05m``, ``3d 4h``.

    Two units at most, the smaller zero-padded so a ticking column does not jitter.
    """
    seconds = max(seconds, 0)
    if seconds < _MINUTE_S:
        return f"{seconds}s"
    if seconds < _HOUR_S:
        minutes, rest = divmod(seconds, _MINUTE_S)
        return f"{minutes}m {rest:02d}s"
    if seconds < _DAY_S:
        hours, rest = divmod(seconds, _HOUR_S)
        return f"{hours}h {rest // _MINUTE_S:02d}m"
    days, rest = divmod(seconds, _DAY_S)
    return f"{days}d {rest // _HOUR_S}h"


def clock_text(seconds: int) -> str:
    """A stopwatch reading: ``0:08``, ``12:34``, ``1:02:03``."""
    seconds = max(seconds, 0)
    hours, rest = divmod(seconds, _HOUR_S)
    minutes, secs = divmod(rest, _MINUTE_S)
    if hours:
        return f"{hours}:{minutes:02d}:{secs:02d}"
    return f"{minutes}:{secs:02d}"


def ago_text(then: datetime, now: datetime) -> str:
    """How long ago: ``just now``, ``45s ago``, ``5m ago``, ``2h 5m ago``, ``3d 4h ago``."""
    seconds = math.floor((now - then).total_seconds())
    if seconds < JUST_NOW_SECONDS:  # includes a moment slightly in the future (clock skew)
        return "just now"
    if seconds < _MINUTE_S:
        return f"{seconds}s ago"
    if seconds < _HOUR_S:
        return f"{seconds // _MINUTE_S}m ago"
    if seconds < _DAY_S:
        hours, rest = divmod(seconds, _HOUR_S)
        minutes = rest // _MINUTE_S
        return f"{hours}h {minutes}m ago" if minutes else f"{hours}h ago"
    days, rest = divmod(seconds, _DAY_S)
    hours = rest // _HOUR_S
    return f"{days}d {hours}h ago" if hours else f"{days}d ago"
