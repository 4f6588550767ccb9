"""DeadlineTimer on a FakeClock: the early ``approaching`` stage, re-arming from it, and
clock jumps.

The timer decides only by the clock it is given; its Qt timer merely paces how often
it looks. So each test moves the fake clock by hand (a little past each moment, as the
last sub-millisecond is waited out on the clock) and waits, with a timeout, for what
the timer says when it next looks.
"""

from __future__ import annotations

from datetime import timedelta

import pytest
from pytestqt.qtbot import QtBot

from taskgui.core.clock import FakeClock
from taskgui.runtime.deadline_timer import DeadlineTimer

LEAD = 0.05
PAST = 0.001  # how far past a moment the tests move the clock


class Recorder:
    """A timer on a fake clock, and what it said, in order."""

    def __init__(self, lead: float = LEAD) -> None:
        self.clock = FakeClock()
        self.timer = DeadlineTimer(self.clock, lead=lead)
        self.said: list[tuple[str, float | None]] = []
        self.timer.approaching.connect(lambda target: self.said.append(("approaching", target)))
        self.timer.fired.connect(lambda: self.said.append(("fired", None)))
        self.timer.clock_jumped.connect(lambda drift: self.said.append(("jumped", drift)))

    def arm_in(self, seconds: float) -> float:
        """Arm for ``seconds`` from now; return the deadline's monotonic time."""
        self.timer.arm(self.clock.now() + timedelta(seconds=seconds))
        return self.clock.monotonic() + seconds


def test_approaching_comes_lead_before_the_deadline_and_fired_follows_unless_rearmed(
    qtbot: QtBot,
) -> None:
    r = Recorder()
    target = r.arm_in(0.2)
    r.clock.advance(0.2 - LEAD + PAST)
    qtbot.waitUntil(lambda: r.said == [("approaching", target)], timeout=5_000)
    r.clock.advance(LEAD)
    qtbot.waitUntil(lambda: len(r.said) == 2, timeout=5_000)
    assert r.said == [("approaching", target), ("fired", None)]
    assert not r.timer.armed


def test_rearming_from_approaching_replaces_the_deadline(qtbot: QtBot) -> None:
    r = Recorder()
    targets: list[float] = []

    def arm_the_next_deadline(_: float) -> None:
        if not targets:  # as the service does once it has dispatched ahead
            targets.append(r.arm_in(0.3))

    r.timer.approaching.connect(arm_the_next_deadline)
    first = r.arm_in(0.2)
    r.clock.advance(0.2 - LEAD + PAST)
    qtbot.waitUntil(lambda: len(r.said) == 1, timeout=5_000)
    # Past the first deadline and into the second one's lead: no "fired" for the first.
    r.clock.advance(0.3 - LEAD + PAST)
    qtbot.waitUntil(lambda: len(r.said) == 2, timeout=5_000)
    assert r.said == [("approaching", first), ("approaching", targets[0])]


def test_a_deadline_already_within_the_lead_is_approaching_at_once(qtbot: QtBot) -> None:
    r = Recorder()
    target = r.arm_in(LEAD / 2)
    qtbot.waitUntil(lambda: r.said == [("approaching", target)], timeout=5_000)


def test_a_clock_jump_is_reported_instead_of_approaching_or_firing(qtbot: QtBot) -> None:
    r = Recorder()
    r.arm_in(0.2)
    r.clock.jump_wall(timedelta(hours=1))
    r.clock.advance(0.2 + PAST)
    qtbot.waitUntil(lambda: bool(r.said), timeout=5_000)
    [(what, drift)] = r.said
    assert what == "jumped" and drift == pytest.approx(3600.0)
    assert not r.timer.armed


def test_without_a_lead_only_fired(qtbot: QtBot) -> None:
    r = Recorder(lead=0.0)
    r.arm_in(0.05)
    r.clock.advance(0.05 + PAST)
    qtbot.waitUntil(lambda: bool(r.said), timeout=5_000)
    assert r.said == [("fired", None)]


def test_a_negative_lead_is_refused() -> None:
    with pytest.raises(ValueError, match="lead"):
        DeadlineTimer(FakeClock(), lead=-0.001)
