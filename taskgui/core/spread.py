"""Spread: start each occurrence a little after its time, so a fleet is not all at :00.

systemd's ``RandomizedDelaySec`` and Jenkins' ``H`` exist because a hundred ``@hourly``
jobs all starting at the top of the hour hurt the machine and the services they call.
``Spread(width)`` starts each occurrence at a random offset in ``[0, width)``;
``Spread(width, fixed=True)`` at a stable offset per task (a hash of its id, like ``H``),
so the task keeps its own minute and the fleet is spread evenly.

The offset never moves the schedule: the next occurrence is computed from the
*unspread* time, so spread cannot drift a fixed-rate cadence. The random source is
injected (the engine's), so tests are reproducible; the offset chosen for the pending
occurrence is stored with its start time, so a restart does not draw again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta

from taskgui.core.digest import blake2b
from taskgui.core.duration import check_duration, format_duration
from taskgui.core.errors import InvalidTaskError

MAX_SPREAD = timedelta(days=1)
_MICROSECONDS = 1_000_000


@dataclass(frozen=True, slots=True)
class Spread:
    """Start each occurrence up to ``width`` late: at random, or at a fixed offset."""

    width: timedelta
    fixed: bool = False

    def __post_init__(self) -> None:
        check_duration(self.width, "the spread")
        if not timedelta(0) < self.width <= MAX_SPREAD:
            raise InvalidTaskError(
                f"the spread must be more than 0 and at most {format_duration(MAX_SPREAD)}"
            )

    def offset(self, task_id: int, random: Callable[[], float]) -> timedelta:
        """How late this occurrence starts: in ``[0, width)``, to the microsecond.

        ``random`` returns a float in ``[0, 1)`` (``random.Random.random``); it is not
        called for a fixed spread, whose offset depends on the task's id only.
        """
        fraction = fixed_fraction(task_id) if self.fixed else random()
        span = int(self.width.total_seconds() * _MICROSECONDS)
        # min(): a float of 0.9999999999999999 times a large span must stay below it.
        return timedelta(microseconds=min(span - 1, int(fraction * span)))

    def describe(self) -> str:
        width = format_duration(self.width)
        return f"spread over {width} (fixed per task)" if self.fixed else f"spread over {width}"


def fixed_fraction(task_id: int) -> float:
    """A stable number in ``[0, 1)`` for a task id, evenly spread over ids.

    A hash, not ``task_id % n``: consecutive ids (a batch of tasks created together) must
    land far apart, and the value must not change between Python versions or runs (the
    built-in ``hash`` is randomised per process for strings and changes with the width).
    """
    digest = blake2b(task_id.to_bytes(16, "big", signed=True), digest_size=8).digest()
    return int.from_bytes(digest, "big") / 2**64
