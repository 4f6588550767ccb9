"""The texts the task table shows: countdowns, attempts, last results, local times.

Pure functions of a snapshot and a ``now``, with no widgets, so every wording can be
tested against a fixed clock and the table model stays a thin lookup. Core values are
aware UTC; this is where they become local time, because a person reads the table.

``LastRun`` lives here rather than in the store: the ui layer must not import
``taskgui.store``, and the table needs only these few fields of a run record.
"""

from __future__ import annotations

import math
import signal
from dataclasses import dataclass
from datetime import datetime, tzinfo

from taskgui.core.attempts import shown_attempt
from taskgui.core.duration import ago_text, clock_text, countdown_text
from taskgui.core.iso_time import in_zone
from taskgui.core.nodes import node_wanted
from taskgui.core.states import RunOutcome, SlotKind, TaskState, WaitReason
from taskgui.core.status import TaskSnapshot
from taskgui.core.task import TaskSpec
from taskgui.ui.plain_text import shown, shown_lines

EMPTY = "—"

# Fixed English names rather than strftime's %a/%b: QCoreApplication sets the C locale
# from the environment, which would make the text (and its tests) depend on it, and
# the rest of the interface is English anyway.
_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")

_STATE_TEXT = {
    TaskState.PENDING: "Pending",
    TaskState.RUNNING: "Running",
    TaskState.RETRYING: "Retrying",
    TaskState.PAUSED: "Paused",
    TaskState.SUCCEEDED: "Succeeded",
    TaskState.EXHAUSTED: "Exhausted",
    TaskState.CANCELLED: "Cancelled",
    TaskState.MISSED: "Missed",
}

_OUTCOME_TEXT = {
    RunOutcome.SUCCEEDED: "succeeded",
    RunOutcome.FAILED: "failed",
    RunOutcome.TIMED_OUT: "timed out",
    RunOutcome.CANCELLED: "cancelled",
    RunOutcome.INTERRUPTED: "interrupted",
    RunOutcome.MISSED: "missed",
    RunOutcome.STOPPED: "stopped (a condition ended)",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class LastRun:
    """How a task's most recent run ended, as the table shows it.

    ``finished_at`` is aware UTC (None when unknown); ``error`` is the runner's one-line
    explanation, shown as a tooltip.
    """

    outcome: RunOutcome
    exit_code: int | None = None
    finished_at: datetime | None = None
    error: str | None = None


# ------------------------------------------------------------------ durations


def _whole_seconds_until(at: datetime, now: datetime) -> int:
    """Seconds left, rounded up: a countdown reads "in 1s" until the moment is reached."""
    return math.ceil((at - now).total_seconds())


# ---------------------------------------------------------------- cell texts


def state_text(state: TaskState) -> str:
    """The state as a column value: ``Pending``, ``Retrying``, ..."""
    return _STATE_TEXT.get(state, str(state).capitalize())


def waiting_text(snapshot: TaskSnapshot) -> str:
    """Why a due task has not started: the question a person asks of a stuck row."""
    reason = snapshot.status.waiting
    if reason is WaitReason.WORKER:
        return "waiting for a worker"
    if reason is WaitReason.CONCURRENCY_KEY:
        key = snapshot.spec.concurrency_key
        return f"waiting: key {key} busy" if key else "waiting for its concurrency key"
    if reason is WaitReason.PREVIOUS_RUN:
        return "waiting for the previous run"
    if reason is WaitReason.WAKE_ANSWER:
        return "waiting for your answer"
    if reason in (WaitReason.NODE, WaitReason.NO_NODE):  # a shared run nobody took yet
        away = reason is WaitReason.NO_NODE
        return f"waiting for {node_wanted(snapshot.spec, none_answers=away)}"
    if reason is WaitReason.UPSTREAM:  # the table names them (ui/table/links.py)
        return "waiting for the tasks it runs after"
    return CONDITION_WAIT_TEXT.get(reason, "") if reason is not None else ""


# What a due task that waits on a run condition shows (core/conditions.py).
CONDITION_WAIT_TEXT = {
    WaitReason.AC_POWER: "waiting: on battery",
    WaitReason.NETWORK: "waiting: offline",
    WaitReason.UNMETERED: "waiting: metered connection",
    WaitReason.IDLE: "waiting: user active",
    WaitReason.UNCHECKABLE: "waiting: a condition cannot be checked here",
    WaitReason.CONDITIONS_SPLIT: "waiting: no machine meets all its conditions",
}


# After a "Next run" text while the schedule cannot be read: it is the last one known,
# and a countdown ticking on would claim a run goes on (or starts) that nobody can see.
STALE_MARK = " (not current)"


@dataclass(slots=True)
class Freeze:
    """About when the schedule was last read, while it cannot be read now (None when
    it can): "Next run" is told as at that moment, marked ``STALE_MARK``, and stands.
    Mutable, one per model: the window sets it (``ui.window.connection_banner``) and
    the model's next-run column reads it at each paint."""

    since: datetime | None = None


def next_run_text(snapshot: TaskSnapshot, now: datetime) -> str:
    """What the task does next, relative to ``now``.

    The order matters: a run in progress is the most useful fact, then a reason a due
    run is held back, then the countdown to the queued run. Terminal tasks show
    ``EMPTY``: they have no next run.
    """
    status = snapshot.status
    state = status.state
    if state.is_terminal:
        return EMPTY
    if state is TaskState.RUNNING:
        if status.running_since is None:
            return "starting…"
        return f"running {clock_text(math.floor((now - status.running_since).total_seconds()))}"
    if status.waiting is not None:
        return waiting_text(snapshot)
    if state is TaskState.PAUSED:
        until = snapshot.spec.paused_until
        if until is None:
            return "paused"
        seconds = _whole_seconds_until(until, now)
        return f"paused, resumes in {countdown_text(seconds)}" if seconds > 0 else "resuming"
    if status.next_run_at is None:
        return EMPTY
    seconds = _whole_seconds_until(status.next_run_at, now)
    if state is TaskState.RETRYING:
        attempts = f"retry {status.slot_attempt}/{snapshot.spec.retry.max_attempts}"
        return f"{attempts} in {clock_text(seconds)}" if seconds > 0 else f"{attempts} due now"
    return f"in {countdown_text(seconds)}" if seconds > 0 else "due now"


def schedule_text(spec: TaskSpec) -> str:
    """The schedule in words (``once``, ``every 5 minutes``, a cron description)."""
    try:
        return spec.describe_schedule()
    except Exception:  # a description is never worth a broken cell
        return EMPTY


def attempts_text(snapshot: TaskSnapshot) -> str:
    """Attempts used by the current occurrence out of the maximum: ``2 / 5``; the empty
    mark when they say nothing (``shown_attempt``)."""
    attempt = shown_attempt(snapshot)
    if attempt is None:
        return EMPTY
    return f"{attempt} / {snapshot.spec.retry.max_attempts}"


def outcome_text(outcome: RunOutcome) -> str:
    return _OUTCOME_TEXT.get(outcome, str(outcome).replace("_", " "))


def signal_name(number: int) -> str:
    """``SIGTERM`` for 15; the number itself for one this system does not name."""
    try:
        return signal.Signals(number).name
    except ValueError:
        return f"signal {number}"


def exit_text(code: int | None) -> str:
    """An exit status as a cell: ``3``, or the signal that ended the command (a
    negative status): ``SIGTERM``; "" when there is none."""
    if code is None:
        return ""
    return signal_name(-code) if code < 0 else str(code)


def exit_phrase(code: int) -> str:
    """``exit 3``, or ``stopped by SIGTERM`` for a command a signal ended."""
    return f"stopped by {signal_name(-code)}" if code < 0 else f"exit {code}"


def last_result_text(last: LastRun | None, now: datetime) -> str:
    """``failed (exit 3) · 5m ago``; ``EMPTY`` before the first run."""
    if last is None:
        return EMPTY
    text = outcome_text(last.outcome)
    if last.exit_code is not None and last.exit_code != 0:
        text += f" ({exit_phrase(last.exit_code)})"
    if last.finished_at is not None:
        text += f" · {ago_text(last.finished_at, now)}"
    return text


def local_time_text(
    moment: datetime, tz: tzinfo | None = None, *, now: datetime | None = None
) -> str:
    """A moment in local time (or ``tz``) as a person scans it: ``Mon 30 Nov 14:05:03``.

    With ``now``, a moment in another year than now says which: ``Mon 30 Nov 2025
    14:05:03`` (a date without its year is only clear within the current one).
    """
    local, zone = in_zone(moment, tz)
    year = "" if now is None or in_zone(now, tz)[0].year == local.year else f" {local.year}"
    return (
        f"{_WEEKDAYS[local.weekday()]} {local.day:02d} {_MONTHS[local.month - 1]}{year} "
        f"{local.hour:02d}:{local.minute:02d}:{local.second:02d}{zone}"
    )


def local_time_full_text(moment: datetime, tz: tzinfo | None = None) -> str:
    """The unambiguous form for a tooltip: ``2026-11-30 14:05:03+01:00``."""
    return in_zone(moment, tz)[0].isoformat(sep=" ", timespec="seconds")  # with its offset


# ------------------------------------------------------------------ tooltips

MAX_TOOLTIP_CHARS = 1_000


def command_tooltip(snapshot: TaskSnapshot) -> str:
    """The command line, cut short if it is a whole script."""
    line = shown(snapshot.spec.command.line)
    return line if len(line) <= MAX_TOOLTIP_CHARS else line[:MAX_TOOLTIP_CHARS] + "…"


TOOLTIP_NEXT_RUNS = 3


def next_run_tooltip(snapshot: TaskSnapshot) -> str | None:
    """The exact moment behind the countdown, in local time, and the runs after it."""
    status = snapshot.status
    if status.state is TaskState.RUNNING and status.running_since is not None:
        return f"running since {local_time_full_text(status.running_since)}"
    if status.next_run_at is None or status.state.is_terminal:
        return None
    lines = [local_time_full_text(status.next_run_at)]
    after = _runs_after(snapshot, status.next_run_at)
    if after:
        lines.append("then " + ", ".join(local_time_full_text(moment) for moment in after))
    return "\n".join(lines)


def _runs_after(snapshot: TaskSnapshot, moment: datetime) -> list[datetime]:
    """The next few occurrences of a recurring schedule after ``moment``."""
    recurrence = snapshot.spec.recurrence
    if not recurrence.is_recurring or snapshot.status.slot_kind is not SlotKind.OCCURRENCE:
        return []
    runs: list[datetime] = []
    current: datetime | None = moment
    try:
        while len(runs) < TOOLTIP_NEXT_RUNS:
            current = recurrence.next_after(current) if current is not None else None
            if current is None:
                break
            runs.append(current)
    except (ValueError, OverflowError):  # the calendar ends
        pass
    return runs


def last_result_tooltip(last: LastRun | None) -> str | None:
    """The runner's error line and the exact finish time."""
    if last is None:
        return None
    lines = [shown_lines(last.error)] if last.error else []  # a paragraph: its lines stay
    if last.finished_at is not None:
        lines.append(f"finished {local_time_full_text(last.finished_at)}")
    return "\n".join(lines) or None
