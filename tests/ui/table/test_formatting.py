"""The table's texts, against a fixed ``now``: countdowns, waits, retries, results, times."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from taskgui.cli.output import attempts_text as cli_attempts_text
from taskgui.core.duration import ago_text, clock_text, countdown_text
from taskgui.core.engine.engine import Engine
from taskgui.core.events import RunDispatched
from taskgui.core.recurrence import Every
from taskgui.core.states import RunOutcome, SlotKind, TaskState, WaitReason
from taskgui.core.status import TaskSnapshot, TaskStatus
from taskgui.ui.table.formatting import (
    EMPTY,
    LastRun,
    attempts_text,
    exit_text,
    last_result_text,
    last_result_tooltip,
    local_time_full_text,
    local_time_text,
    next_run_text,
    next_run_tooltip,
    schedule_text,
    state_text,
)
from tests.helpers.factories import T0, at, fixed_retry, make_spec

NOW = T0


def snap(state: TaskState = TaskState.PENDING, *, spec: Any = None, **status: Any) -> TaskSnapshot:
    return TaskSnapshot(spec or make_spec(1), TaskStatus(state=state, **status))


def pending_in(seconds: float) -> str:
    return next_run_text(snap(next_run_at=NOW + timedelta(seconds=seconds)), NOW)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (45, "in 45s"),
        (4 * 60 + 12, "in 4m 12s"),
        (4 * 60 + 5, "in 4m 05s"),
        (2 * 3600 + 5 * 60 + 59, "in 2h 05m"),
        (3 * 86_400 + 4 * 3600 + 59 * 60, "in 3d 4h"),
        (0.2, "in 1s"),  # rounded up: it is not due yet
        (60, "in 1m 00s"),
    ],
)
def test_a_pending_task_counts_down_compactly(seconds: float, text: str) -> None:
    assert pending_in(seconds) == text


@pytest.mark.parametrize("seconds", [0, -0.5, -3600])
def test_a_pending_task_at_or_past_its_time_is_due_now(seconds: float) -> None:
    assert pending_in(seconds) == "due now"


def test_a_pending_task_without_a_queued_run_shows_nothing() -> None:
    assert next_run_text(snap(next_run_at=None), NOW) == EMPTY


@pytest.mark.parametrize(
    ("reason", "key", "text"),
    [
        (WaitReason.WORKER, None, "waiting for a worker"),
        (WaitReason.CONCURRENCY_KEY, "backup", "waiting: key backup busy"),
        (WaitReason.PREVIOUS_RUN, None, "waiting for the previous run"),
    ],
)
def test_a_due_task_says_why_it_waits(reason: WaitReason, key: str | None, text: str) -> None:
    snapshot = snap(
        spec=make_spec(1, concurrency_key=key),
        next_run_at=NOW - timedelta(seconds=3),
        waiting=reason,
    )
    assert next_run_text(snapshot, NOW) == text


def test_a_retrying_task_shows_the_next_attempt_and_a_clock_countdown() -> None:
    spec = make_spec(1, retry=fixed_retry(max_attempts=5))
    snapshot = snap(
        TaskState.RETRYING,
        spec=spec,
        attempt=1,
        slot_attempt=2,
        next_run_at=NOW + timedelta(seconds=8),
    )
    assert next_run_text(snapshot, NOW) == "retry 2/5 in 0:08"
    later = NOW + timedelta(seconds=8)
    assert next_run_text(snapshot, later) == "retry 2/5 due now"
    long = snap(
        TaskState.RETRYING, spec=spec, slot_attempt=3, next_run_at=NOW + timedelta(seconds=3725)
    )
    assert next_run_text(long, NOW) == "retry 3/5 in 1:02:05"


def test_a_running_task_shows_how_long_it_has_run() -> None:
    running = snap(TaskState.RUNNING, running=1, running_since=NOW - timedelta(seconds=42.7))
    assert next_run_text(running, NOW) == "running 0:42"
    assert next_run_text(snap(TaskState.RUNNING, running=1), NOW) == "starting…"


def test_a_paused_task_says_so() -> None:
    assert next_run_text(snap(TaskState.PAUSED, next_run_at=NOW), NOW) == "paused"


@pytest.mark.parametrize(
    "state",
    [TaskState.SUCCEEDED, TaskState.EXHAUSTED, TaskState.CANCELLED, TaskState.MISSED],
)
def test_a_finished_task_has_no_next_run(state: TaskState) -> None:
    assert next_run_text(snap(state, next_run_at=NOW + timedelta(hours=1)), NOW) == EMPTY


@given(st.integers(min_value=1, max_value=10**8))
def test_every_future_countdown_reads_in_something(seconds: int) -> None:
    text = pending_in(seconds)
    assert text.startswith("in ")
    assert 2 <= len(text.split()) <= 3


def test_clock_and_countdown_helpers() -> None:
    assert clock_text(8) == "0:08"
    assert clock_text(754) == "12:34"
    assert clock_text(3723) == "1:02:03"
    assert clock_text(-5) == "0:00"
    assert countdown_text(0) == "0s"


def test_attempts_show_used_over_maximum() -> None:
    spec = make_spec(1, retry=fixed_retry(max_attempts=5))
    assert attempts_text(snap(TaskState.RETRYING, spec=spec, attempt=2)) == "2 / 5"
    assert attempts_text(snap(TaskState.RETRYING, spec=spec, attempt=0)) == EMPTY


_FAILED = RunOutcome.FAILED
_OK = RunOutcome.SUCCEEDED


@pytest.mark.parametrize(
    ("state", "status", "text"),
    [
        # An occurrence under way, or given up on: the count is the point.
        (TaskState.RUNNING, {"attempt": 1, "last_outcome": _OK}, "1 / 3"),
        (TaskState.RUNNING, {"attempt": 2, "last_outcome": _FAILED}, "2 / 3"),
        (TaskState.RETRYING, {"attempt": 1, "last_outcome": _FAILED}, "1 / 3"),
        (TaskState.EXHAUSTED, {"attempt": 3, "last_outcome": _FAILED}, "3 / 3"),
        # Held between two attempts of one occurrence: still under way.
        (TaskState.PAUSED, {"attempt": 1, "slot_kind": SlotKind.RETRY}, "1 / 3"),
        # A recurring task whose last occurrence failed every attempt, pending the next.
        (TaskState.PENDING, {"attempt": 3, "last_outcome": _FAILED}, "3 / 3"),
        (TaskState.PENDING, {"attempt": 3, "last_outcome": RunOutcome.TIMED_OUT}, "3 / 3"),
        # After a success, a cancel, a miss: the finished occurrence's count is noise.
        (TaskState.PENDING, {"attempt": 1, "last_outcome": _OK}, EMPTY),
        (TaskState.PENDING, {"attempt": 2, "last_outcome": _OK}, EMPTY),  # a retry worked
        (TaskState.PAUSED, {"attempt": 1, "last_outcome": _OK}, EMPTY),
        (TaskState.SUCCEEDED, {"attempt": 1, "last_outcome": _OK}, EMPTY),
        (TaskState.CANCELLED, {"attempt": 1, "last_outcome": _OK}, EMPTY),
        (TaskState.CANCELLED, {"attempt": 2, "last_outcome": _FAILED}, EMPTY),
        (TaskState.MISSED, {"attempt": 1, "last_outcome": RunOutcome.MISSED}, EMPTY),
        (TaskState.PENDING, {"attempt": 1, "last_outcome": RunOutcome.MISSED}, EMPTY),
    ],
)
def test_attempts_show_only_while_they_matter(
    state: TaskState, status: dict[str, Any], text: str
) -> None:
    spec = make_spec(1, retry=fixed_retry(max_attempts=3))
    assert attempts_text(snap(state, spec=spec, **status)) == text
    # `taskgui list` and `show` say the same (they printed "1/3" after a success).
    in_a_terminal = cli_attempts_text(snap(state, spec=spec, **status))
    assert in_a_terminal == ("-" if text == EMPTY else text.replace(" / ", "/"))


def test_attempts_follow_a_recurring_task_through_the_real_engine() -> None:
    """What the engine really leaves in the status after each outcome (a trial saw
    "1 / 3" beside a task whose run had just succeeded)."""
    engine = Engine()
    spec = make_spec(
        1, recurrence=Every(timedelta(minutes=10)), retry=fixed_retry(max_attempts=3, delay=10)
    )
    engine.add(spec)

    def run(moment: float, outcome: RunOutcome) -> tuple[str, str]:
        (ticket,) = [e.run for e in engine.due(at(moment), 1) if isinstance(e, RunDispatched)]
        running = attempts_text(engine.snapshot(1))
        engine.finished(ticket.run_id, outcome, at(moment + 1))
        return running, attempts_text(engine.snapshot(1))

    assert run(0, RunOutcome.SUCCEEDED) == ("1 / 3", EMPTY)  # then pending the next one
    assert engine.snapshot(1).status.attempt == 1  # (the count the cell used to show)
    assert run(600, RunOutcome.FAILED) == ("1 / 3", "1 / 3")  # retrying
    assert run(611, RunOutcome.FAILED) == ("2 / 3", "2 / 3")
    assert run(622, RunOutcome.FAILED) == ("3 / 3", "3 / 3")  # gave up: pending the next
    assert engine.snapshot(1).status.state is TaskState.PENDING
    assert run(1200, RunOutcome.FAILED) == ("1 / 3", "1 / 3")
    assert run(1211, RunOutcome.SUCCEEDED) == ("2 / 3", EMPTY)  # the retry worked
    engine.cancel(1)
    assert engine.snapshot(1).status.state is TaskState.CANCELLED
    assert attempts_text(engine.snapshot(1)) == EMPTY


def test_a_one_off_that_succeeded_shows_no_attempts() -> None:
    engine = Engine()
    engine.add(make_spec(1, retry=fixed_retry(max_attempts=3)))
    (ticket,) = [e.run for e in engine.due(at(0), 1) if isinstance(e, RunDispatched)]
    engine.finished(ticket.run_id, RunOutcome.SUCCEEDED, at(1))
    assert engine.snapshot(1).status.state is TaskState.SUCCEEDED
    assert attempts_text(engine.snapshot(1)) == EMPTY


@pytest.mark.parametrize(
    ("last", "text"),
    [
        (None, EMPTY),
        (
            LastRun(outcome=RunOutcome.FAILED, exit_code=3, finished_at=NOW - timedelta(minutes=5)),
            "failed (exit 3) · 5m ago",
        ),
        (
            LastRun(outcome=RunOutcome.SUCCEEDED, exit_code=0, finished_at=NOW),
            "succeeded · just now",
        ),
        (
            LastRun(outcome=RunOutcome.TIMED_OUT, finished_at=NOW - timedelta(seconds=30)),
            "timed out · 30s ago",
        ),
        (
            LastRun(outcome=RunOutcome.FAILED, finished_at=NOW - timedelta(hours=2, minutes=5)),
            "failed · 2h 5m ago",
        ),
        (LastRun(outcome=RunOutcome.INTERRUPTED), "interrupted"),
        (
            LastRun(outcome=RunOutcome.FAILED, exit_code=-15, finished_at=NOW),
            "failed (stopped by SIGTERM) · just now",
        ),
    ],
)
def test_last_result_names_the_outcome_and_how_long_ago(last: LastRun | None, text: str) -> None:
    assert last_result_text(last, NOW) == text


def test_ago_rounds_to_what_a_person_scans() -> None:
    assert ago_text(NOW + timedelta(seconds=2), NOW) == "just now"  # clock skew
    assert ago_text(NOW - timedelta(hours=3), NOW) == "3h ago"
    assert ago_text(NOW - timedelta(days=3, hours=4, minutes=9), NOW) == "3d 4h ago"
    assert ago_text(NOW - timedelta(days=2), NOW) == "2d ago"


def test_state_text_is_a_capitalised_word_for_every_state() -> None:
    assert state_text(TaskState.PENDING) == "Pending"
    assert state_text(TaskState.RETRYING) == "Retrying"
    for state in TaskState:
        assert state_text(state)[0].isupper()


def test_local_times_use_the_given_zone() -> None:
    moment = datetime(2026, 11, 30, 13, 5, 3, 600_000, tzinfo=UTC)
    plus_one = timezone(timedelta(hours=1))
    assert local_time_text(moment, plus_one) == "Mon 30 Nov 14:05:03"
    assert local_time_full_text(moment, plus_one) == "2026-11-30 14:05:03+01:00"


def test_a_time_in_another_year_says_which() -> None:
    moment = datetime(2025, 11, 30, 13, 5, 3, tzinfo=UTC)
    this_year = datetime(2025, 12, 31, 23, 0, tzinfo=UTC)
    next_year = datetime(2026, 1, 2, tzinfo=UTC)
    assert local_time_text(moment, UTC, now=this_year) == "Sun 30 Nov 13:05:03"
    assert local_time_text(moment, UTC, now=next_year) == "Sun 30 Nov 2025 13:05:03"


def test_an_exit_by_signal_is_named_not_numbered() -> None:
    assert exit_text(None) == ""
    assert exit_text(0) == "0"
    assert exit_text(3) == "3"
    assert exit_text(-15) == "SIGTERM"
    assert exit_text(-9) == "SIGKILL"
    assert exit_text(-200) == "signal 200"


def test_local_times_default_to_the_machine_zone() -> None:
    moment = datetime(2026, 7, 4, 9, 30, tzinfo=UTC)
    local = moment.astimezone()
    assert local_time_text(moment) == local_time_text(moment, local.tzinfo)


def test_schedule_text_describes_the_recurrence() -> None:
    assert schedule_text(make_spec(1)) == "once"
    every = make_spec(1, recurrence=Every(timedelta(minutes=5)))
    assert schedule_text(every) == "every 5 minutes"


def test_tooltips_give_exact_times_and_the_error() -> None:
    when = NOW + timedelta(minutes=3)
    assert next_run_tooltip(snap(next_run_at=when)) == local_time_full_text(when)
    assert next_run_tooltip(snap(TaskState.SUCCEEDED, next_run_at=when)) is None
    running = snap(TaskState.RUNNING, running=1, running_since=NOW)
    assert next_run_tooltip(running) == f"running since {local_time_full_text(NOW)}"
    last = LastRun(outcome=RunOutcome.FAILED, exit_code=3, finished_at=NOW, error="exit status 3")
    assert last_result_tooltip(last) == f"exit status 3\nfinished {local_time_full_text(NOW)}"
    assert last_result_tooltip(None) is None
