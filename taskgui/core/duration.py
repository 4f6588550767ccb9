"""Human durations: ``30s``, ``5m``, ``1h30m``, ``2d``, ``1w`` <-> timedelta.

Shared by the CLI flags, the task dialog and the human schedule text, so that what a
person types and what they read back use one grammar.
"""

from __future__ import annotations

import re
from datetime import timedelta

from taskgui.core.errors import InvalidTaskError

_UNIT_SECONDS = {"w": 604_800, "d": 86_400, "h": 3_600, "m": 60, "s": 1, "ms": 0.001}
_PART = re.compile(r"(\d+(?:\.\d+)?)\s*(ms|w|d|h|m|s)", re.IGNORECASE)
_WHOLE = re.compile(r"^\s*(?:\d+(?:\.\d+)?\s*(?:ms|w|d|h|m|s)\s*)+$", re.IGNORECASE)
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
            f"cannot read {text!r} as a duration; write it like 30s, 5m, 1h30m or 2d"
        )
    try:
        return timedelta(seconds=seconds)
    except (OverflowError, ValueError):
        raise InvalidTaskError(f"the duration {text!r} is too long") from None


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
