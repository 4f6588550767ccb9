"""One timer for the earliest deadline, armed precisely and re-armed, never polling.

Linux gives a timer that sleeps in ``poll()`` a slack of about 1/1000 of its timeout, so
one long ``PreciseTimer`` fires late by about 1 ms per second of wait. The timer is
therefore armed in two stages: a first shot that wakes a little before the slack could
matter, then a short shot for the remainder. QTimer counts whole milliseconds; the
last sub-millisecond is waited out on the spot, so a deadline is never met early.

A wait is capped (``MAX_WAIT``) so that a clock jump or a resume from sleep is noticed
within that time: each wake compares how far the wall clock moved with how far the
monotonic clock moved. A ``CoarseTimer`` may fire up to 5% early and never drives this.

With a ``lead``, the timer also says when the deadline is that close (``approaching``),
so that its owner can prepare what is due while there is time; this early stage need
not be precise. If the owner does not re-arm or disarm the timer from that signal, the
timer goes on and fires at the deadline as usual.

Signals:
    approaching(float): the deadline is about ``lead`` away or less; its monotonic time.
    fired(): the deadline has been reached (by the monotonic clock).
    clock_jumped(float): wall time moved this many seconds more than monotonic time.
"""

from __future__ import annotations

import math
from datetime import datetime

from PySide6.QtCore import QObject, Qt, QTimer, Signal

from taskgui.core.clock import Clock

MAX_WAIT = 60.0  # seconds between wakes at most, to notice clock jumps and sleep
FINAL_STAGE = 0.020  # arm the last stretch separately when the wait is longer
JUMP_THRESHOLD = 1.0  # seconds of disagreement between wall and monotonic time


class DeadlineTimer(QObject):
    """Fires once when a wall-clock deadline is reached; re-arm it for the next one."""

    approaching = Signal(float)
    fired = Signal()
    clock_jumped = Signal(float)

    def __init__(self, clock: Clock, parent: QObject | None = None, *, lead: float = 0.0) -> None:
        super().__init__(parent)
        if not lead >= 0:
            raise ValueError(f"the lead cannot be negative, not {lead!r}")
        self._clock = clock
        self._lead = lead
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setTimerType(Qt.TimerType.PreciseTimer)
        self._timer.timeout.connect(self._on_timer_timeout)
        self._target: float | None = None  # monotonic time of the deadline
        self._early: float | None = None  # monotonic time of ``approaching``, until sent
        self._arming = 0  # counts arm() calls: did a slot re-arm the timer?
        self._armed_wall = 0.0
        self._armed_mono = 0.0

    @property
    def armed(self) -> bool:
        return self._target is not None

    def arm(self, deadline: datetime | None) -> None:
        """Fire at ``deadline`` (wall time); None disarms. Replaces any earlier arming."""
        self._arming += 1
        if deadline is None:
            self._target = self._early = None
            self._timer.stop()
            return
        now = self._clock.now()
        mono = self._clock.monotonic()
        self._armed_wall = now.timestamp()
        self._armed_mono = mono
        self._target = mono + max(0.0, (deadline - now).total_seconds())
        self._early = self._target - self._lead if self._lead else None
        self._schedule(mono)

    def disarm(self) -> None:
        self.arm(None)

    def _schedule(self, mono: float) -> None:
        assert self._target is not None
        goal = self._target if self._early is None else self._early
        remaining = goal - mono
        if remaining > FINAL_STAGE:
            # Wake early enough that this shot's slack cannot pass the deadline, and
            # no later than MAX_WAIT (whose own slack must not pass it either).
            wait = min(MAX_WAIT, remaining - max(FINAL_STAGE / 2, remaining / 500))
        else:
            wait = remaining
        self._timer.start(max(0, math.floor(wait * 1000)))

    def _on_timer_timeout(self) -> None:
        if self._target is None:
            return
        mono = self._clock.monotonic()
        wall = self._clock.now().timestamp()
        drift = (wall - self._armed_wall) - (mono - self._armed_mono)
        if abs(drift) > JUMP_THRESHOLD:
            # The deadline was computed in wall time; let the owner re-plan.
            self._target = self._early = None
            self.clock_jumped.emit(drift)
            return
        if self._early is not None:
            self._on_early_stage(mono, self._early)
            return
        remaining = self._target - mono
        if remaining > 0.001:
            self._schedule(mono)
            return
        while remaining > 0:  # under a millisecond: wait it out rather than fire early
            remaining = self._target - self._clock.monotonic()
        self._target = None
        self.fired.emit()

    def _on_early_stage(self, mono: float, early: float) -> None:
        if early - mono > 0.001:
            self._schedule(mono)
            return
        self._early = None
        target = self._target
        assert target is not None
        arming = self._arming
        self.approaching.emit(target)
        if self._arming == arming:  # left as it was: go on to the deadline itself
            self._schedule(self._clock.monotonic())
