"""Dispatch ahead: a deadline's runs are dispatched a few milliseconds before it.

Most of a run's start lateness used to be waking an idle pool thread *after* the
deadline (a cross-CPU wake-up, slow on a small VM), not the scheduler's own work. So
the deadline timer also says when the earliest deadline is ``lead`` away. If a worker
is free and no due task waits for one, the service then asks the engine what is due
*at the deadline* (the deadline is the engine's now), commits that dispatch, and hands
the runs over with the deadline's monotonic time as their start time: each worker
thread wakes early, waits for the moment on its own timer, and starts nothing before
it. The engine decides for the deadline exactly what it would decide at the deadline:
the same tasks, in the same priority order, for the free workers only.

Until that moment has passed, anything else the service dispatches (a worker freed, a
task added or run now) is dispatched *for* that moment too, as if it had happened just
after it (``moment``): so a task due at the deadline and left waiting for a worker or
a concurrency key can never start early, and something new is late by at most ``lead``
(a more urgent newcomer that finds no worker free takes one back from a run still
waiting; see ``SchedulerService._make_way``).

A run waiting for its start time counts as running: its worker is taken, and the task
shows as running. A crash in those few milliseconds leaves it recorded as started: the
next start retries it as interrupted (at-least-once). A wall-clock jump inside the wait
is not seen by it (it waits on the monotonic clock); the timer reports the jump, and
everything after it is planned again.

What the recorded times mean: a ticket's ``dispatched_at`` (stored as the run's
``started_at``) is the moment the run was released to start: when the engine
dispatched it or, for a run dispatched ahead, the deadline it waited for. Its process
starts at that moment, not before.

Plain Python on the injected clock, so the rules are tested with a ``FakeClock``.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from taskgui.core.clock import Clock

# How far wall and monotonic time may drift apart over a wait of a few milliseconds
# (NTP slewing is at most 0.05%); a clock jump is far more, and the timer reports it.
CLOCKS_AGREE = timedelta(milliseconds=10)


class DispatchAhead:
    """Whether a deadline may be dispatched ahead now, and, until the last deadline
    dispatched ahead has passed, the moment any dispatch is made for."""

    def __init__(self, clock: Clock, lead: float) -> None:
        if not lead >= 0:
            raise ValueError(f"the dispatch lead cannot be negative, not {lead!r}")
        self.lead = lead
        self._clock = clock
        self._held: tuple[datetime, float] | None = None  # deadline, its monotonic time

    def start_time(self, deadline: datetime, target: float) -> float | None:
        """When the runs of ``deadline`` would start (monotonic), dispatched now.

        ``target`` is the deadline's monotonic time as the timer reckoned it; the start
        is never earlier than either reckoning. None when the deadline should not be
        dispatched ahead: it has come already, it is not the one the timer was armed
        for (it moved later), or it was dispatched ahead already.
        """
        mono = self._clock.monotonic()
        start_at = max(target, mono + (deadline - self._clock.now()).total_seconds())
        if start_at <= mono or start_at - mono > self.lead + CLOCKS_AGREE.total_seconds():
            return None
        if self._held is not None and start_at <= self._held[1]:
            return None
        return start_at

    def hold(self, deadline: datetime, start_at: float) -> None:
        """``deadline`` has been dispatched ahead, to start at ``start_at``."""
        self._held = (deadline, start_at)

    def forget(self) -> None:
        """After a clock jump or a rebuilt engine: dispatch for the present again."""
        self._held = None

    def moment(self, now: datetime) -> tuple[datetime, float | None]:
        """The engine's now for a dispatch at ``now``, and the monotonic time its runs
        may start (None: at once). Before a held deadline has passed, that deadline."""
        if self._held is None:
            return now, None
        deadline, start_at = self._held
        left = start_at - self._clock.monotonic()
        if left <= 0:
            self._held = None
            return now, None
        # Counted on the monotonic clock, so that a wall clock set back meanwhile cannot
        # make the engine look past the deadline; while the clocks agree, the deadline.
        at = now + timedelta(seconds=left)
        return (deadline if at > deadline - CLOCKS_AGREE else at), start_at
