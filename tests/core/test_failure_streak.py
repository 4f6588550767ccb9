"""A failure streak counted from history: newest first, up to the first success."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from datetime import time as wall_time

from taskgui.core.notify_rules import (
    MAX_STREAK,
    NotifyGate,
    failure_streak,
    parse_quiet_hours,
    parse_rule,
)
from taskgui.core.states import RunOutcome as O
from tests.helpers.factories import T0


def test_counts_failures_up_to_the_first_success_passing_over_missed_and_open_runs() -> None:
    assert failure_streak([]) == 0
    assert failure_streak([O.SUCCEEDED, O.FAILED]) == 0
    assert failure_streak([O.FAILED, O.MISSED, None, O.TIMED_OUT, O.SUCCEEDED, O.FAILED]) == 2
    assert failure_streak([O.INTERRUPTED, O.FAILED]) == 2
    assert failure_streak([O.FAILED] * (MAX_STREAK + 50)) == MAX_STREAK + 1


def test_a_seeded_streak_carries_into_the_next_attempt() -> None:
    gate = NotifyGate()
    rule = parse_rule("after:3")
    assert not gate.knows(7)
    gate.seed(7, 2)
    assert gate.knows(7) and gate.streak(7) == 2
    local = T0.time()
    assert gate.attempt_finished(7, rule, failed=True, gave_up=False, now=T0, local=local)
    gate.forget(7)
    assert not gate.knows(7) and gate.streak(7) == 0
    gate.seed(8, 0)
    assert gate.knows(8) and gate.streak(8) == 0


def test_quiet_hours_end_next_at_their_end_time() -> None:
    quiet = parse_quiet_hours("22:00-07:00")
    assert quiet is not None
    zone = timezone(timedelta(hours=2))
    late = datetime(2026, 3, 1, 23, 30, tzinfo=zone)
    assert quiet.ends_after(late) == datetime(2026, 3, 2, 7, 0, tzinfo=zone)
    early = datetime(2026, 3, 2, 5, 0, tzinfo=zone)
    assert quiet.ends_after(early) == datetime(2026, 3, 2, 7, 0, tzinfo=zone)
    gate = NotifyGate(quiet)
    assert gate.in_quiet_hours(wall_time(23)) and not gate.in_quiet_hours(wall_time(12))
    rule = parse_rule("on-failure")
    held = gate.attempt_finished(
        1, rule, failed=True, gave_up=False, now=T0, local=wall_time(23), quiet_drops=False
    )
    assert held is not None  # kept for the summary by the caller
    assert (
        gate.attempt_finished(1, rule, failed=True, gave_up=False, now=T0, local=wall_time(23))
        is None
    )
