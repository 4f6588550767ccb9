"""The timeline's arithmetic: the time axis, and what a lane shows in a span."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime, timedelta

from taskgui.core.recurrence import Cron, Every
from taskgui.core.states import RunOutcome, SlotKind, TaskState
from taskgui.core.status import RunRecord, TaskSnapshot, TaskStatus, initial_status
from taskgui.core.task import Command, TaskSpec
from taskgui.ui.timeline.lanes import bars_of, expected_duration, upcoming
from taskgui.ui.timeline.scale import MAX_SECONDS_PER_PX, MIN_TICK_PX, TimeScale

T0 = datetime(2026, 3, 2, 12, 0, tzinfo=UTC)


def test_zoom_keeps_the_moment_under_the_pointer() -> None:
    scale = TimeScale(T0, 60.0)
    anchor = scale.time_at(300)
    zoomed = scale.zoomed(2.0, 300)
    assert zoomed.seconds_per_px == 30.0
    assert abs((zoomed.time_at(300) - anchor).total_seconds()) < 1e-6
    assert TimeScale(T0, 1e9).seconds_per_px == MAX_SECONDS_PER_PX
    assert scale.scrolled(10).start == T0 + timedelta(minutes=10)


def test_ticks_are_round_and_far_enough_apart() -> None:
    scale = TimeScale(T0 + timedelta(minutes=7), 30.0)  # an hour is 120 px
    ticks = scale.ticks(1200, local=False)
    gaps = [b - a for (a, _), (b, _) in itertools.pairwise(ticks)]
    assert all(gap >= MIN_TICK_PX - 1e-6 for gap in gaps)
    assert ticks[0][1] == "13:00"


def snapshot(spec: TaskSpec, status: TaskStatus | None = None) -> TaskSnapshot:
    return TaskSnapshot(spec.with_id(1), status or initial_status(spec))


def every(seconds: float, start: datetime = T0) -> TaskSpec:
    return TaskSpec(
        name="t",
        command=Command(line="true"),
        first_run_at=start,
        recurrence=Every(timedelta(seconds=seconds)),
    )


def test_occurrences_are_computed_for_the_visible_span_only() -> None:
    task = snapshot(every(600))
    found = upcoming(task, T0 + timedelta(hours=1), T0 + timedelta(hours=2), max_marks=100)
    assert found.marks[0] == T0 + timedelta(hours=1)
    assert len(found.marks) == 6 and found.dense_from is None
    # A year ahead: reached by arithmetic, not by walking 52,000 occurrences.
    far = upcoming(task, T0 + timedelta(days=365), T0 + timedelta(days=365, hours=1), 100)
    assert far.marks[0] == T0 + timedelta(days=365)


def test_a_lane_with_more_than_fit_becomes_a_density_strip() -> None:
    task = snapshot(every(60))
    found = upcoming(task, T0, T0 + timedelta(days=7), max_marks=200)
    assert found.marks == () and found.dense_from == T0
    assert abs(found.rate - 1 / 60) < 1e-9


def test_a_cron_lane_far_ahead_jumps_to_the_view() -> None:
    spec = TaskSpec(
        name="c", command=Command(line="true"), first_run_at=T0, recurrence=Cron("0 9 * * *", "UTC")
    )
    task = snapshot(spec)
    start = T0 + timedelta(days=100)
    found = upcoming(task, start, start + timedelta(days=2), max_marks=100)
    assert [m.hour for m in found.marks] == [9, 9]


def test_a_paused_task_shows_no_upcoming_marks() -> None:
    spec = every(60)
    status = initial_status(spec)._replace(state=TaskState.PAUSED)
    paused = TaskSnapshot(spec.with_id(1), status)
    assert upcoming(paused, T0, T0 + timedelta(hours=1), 100).marks == ()


def run(start_min: float, minutes: float | None, outcome: RunOutcome | None) -> RunRecord:
    began = T0 + timedelta(minutes=start_min)
    return RunRecord(
        id=1,
        task_id=1,
        attempt=1,
        kind=SlotKind.OCCURRENCE,
        scheduled_at=began,
        started_at=began,
        finished_at=None if minutes is None else began + timedelta(minutes=minutes),
        outcome=outcome,
    )


def test_bars_have_their_real_duration_and_a_running_one_ends_now() -> None:
    runs = [
        run(0, 2, RunOutcome.SUCCEEDED),
        run(10, 4, RunOutcome.FAILED),
        run(20, None, None),
        run(-120, 1, RunOutcome.SUCCEEDED),  # before the view
    ]
    now = T0 + timedelta(minutes=25)
    bars = bars_of(runs, T0, T0 + timedelta(hours=1), now)
    assert [(b.outcome, (b.end - b.start).total_seconds()) for b in bars] == [
        (RunOutcome.SUCCEEDED, 120.0),
        (RunOutcome.FAILED, 240.0),
        (None, 300.0),
    ]
    assert expected_duration(runs) == timedelta(minutes=2)  # median of 2, 4, 1
