"""How the command line shows tasks and runs: JSON for scripts, tables for people.

Kept apart from ``cli.py`` so the parsing and the exit-code rules stay readable. The
JSON field names are a scripting contract (``id``, ``state``, ``next_run_at``, ...):
add fields, never rename them. Times in JSON are aware UTC with milliseconds, e.g.
``2026-11-30T05:12:03.123+00:00``; tables show local time, because a person reads them.
A task's ``definition`` is its one JSON shape (``core.shape``: what an export file and
a request hold, exact to the microsecond), and a run is the shape's run; the older
keys beside them (``recurrence``, ``retry``, ``command``, ...) are views of the same.

Names, commands, folders and errors come from whoever wrote the task (or the crontab
it was imported from), so every table and ``show`` line passes them through
``terminal_text.visible``: an escape sequence or a bidi override in a name is printed
as ``\x1b`` or ``\u202e``, never obeyed by the terminal. JSON goes through
``json_text``, which escapes the same characters the JSON way (same values).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from taskgui.core.attempts import shown_attempt
from taskgui.core.dependency_text import waiting_for
from taskgui.core.duration import format_duration
from taskgui.core.iso_time import in_zone
from taskgui.core.nodes import node_wanted
from taskgui.core.retry import Backoff, RetryPolicy
from taskgui.core.shape import task as shape
from taskgui.core.states import TaskState, WaitReason
from taskgui.core.status import TaskSnapshot
from taskgui.core.task import Command, TaskId, TaskSpec
from taskgui.core.terminal_text import visible, visible_json
from taskgui.store.protocols import RunRecord

NAME_WIDTH = 32
SCHEDULE_WIDTH = 40
ERROR_WIDTH = 60
NONE_TEXT = "-"


# ------------------------------------------------------------------------- values


def iso(moment: datetime | None) -> str | None:
    """ISO 8601 in UTC with milliseconds and offset: precise, sortable, parseable."""
    if moment is None:
        return None
    return moment.astimezone(UTC).isoformat(timespec="milliseconds")


def attempts_text(snapshot: TaskSnapshot) -> str:
    """``2/5`` while they count (``shown_attempt``, as the window's column); ``-`` else."""
    attempt = shown_attempt(snapshot)
    return NONE_TEXT if attempt is None else f"{attempt}/{snapshot.spec.max_attempts}"


def local(moment: datetime | None) -> str:
    """A moment as this machine's wall time, the way a person reads a clock."""
    if moment is None:
        return NONE_TEXT
    shown, zone = in_zone(moment)
    return shown.strftime("%Y-%m-%d %H:%M:%S") + zone


def _seconds(value: timedelta | None) -> float | None:
    return None if value is None else value.total_seconds()


def _shorten(text: str, width: int) -> str:
    """One line of ``width`` characters at most, then every control made visible.

    Cut before escaping, so no escape is cut in half (an escaped cell may be wider).
    Its tabs and line breaks are written ``\t``, ``\n`` as ``show`` writes them, not
    folded into a space: "tab" TAB "here" printed beside a real "tab here" (a trial).
    """
    return visible(text if len(text) <= width else text[: width - 1] + "…")


def json_text(value: Any) -> str:
    """``value`` as indented JSON a terminal cannot be steered by (see the module doc)."""
    return visible_json(json.dumps(value, indent=2, ensure_ascii=False))


def describe_retry(policy: RetryPolicy) -> str:
    """One line a person can check against what they asked for."""
    if not policy.retries:
        return "no retry"
    if policy.backoff is Backoff.FIXED:
        delays = f"every {format_duration(policy.base_delay)}"
    else:
        delays = (
            f"exponential from {format_duration(policy.base_delay)} "
            f"up to {format_duration(policy.max_delay)}"
        )
    jitter = ", with jitter" if policy.jitter else ""
    return f"up to {policy.max_attempts} attempts, {delays}{jitter}"


# ------------------------------------------------------------------- waiting

# ``waiting`` in JSON: a WaitReason's value (worker, concurrency_key, previous_run, as
# the process running the schedule recorded it), or one of these two.
PAUSED = "paused"
NO_SCHEDULER = "no_scheduler"  # due, but no process runs the schedule

_WAIT_WORDS = {
    WaitReason.WORKER.value: "worker",
    WaitReason.CONCURRENCY_KEY.value: "key",
    WaitReason.PREVIOUS_RUN.value: "previous run",
    WaitReason.AC_POWER.value: "on battery",
    WaitReason.NETWORK.value: "offline",
    WaitReason.UNMETERED.value: "metered connection",
    WaitReason.IDLE.value: "user active",
    WaitReason.UNCHECKABLE.value: "condition cannot be checked here",
    WaitReason.CONDITIONS_SPLIT.value: "no machine meets all its conditions",
    WaitReason.WAKE_ANSWER.value: "an answer at the window (after a sleep)",
    PAUSED: "paused",
    NO_SCHEDULER: "no scheduler",
}
_WAITING_STATES = (TaskState.PENDING, TaskState.RETRYING)


def wait_reasons(
    snapshots: Sequence[TaskSnapshot],
    recorded: Mapping[TaskId, WaitReason],
    now: datetime,
    *,
    scheduled: bool,
) -> dict[TaskId, str]:
    """What each task waits for, where it waits: what the window shows for it.

    ``recorded`` is what the process running the schedule wrote (``wait_reasons`` of
    the repository); ``scheduled`` says whether such a process runs now. Without one, a
    due task waits for it rather than for whatever it last waited for.
    """
    reasons: dict[TaskId, str] = {}
    for snapshot in snapshots:
        status = snapshot.status
        task_id = snapshot.spec.id
        if status.state is TaskState.PAUSED:
            reasons[task_id] = PAUSED
        elif status.state not in _WAITING_STATES:
            continue
        elif snapshot.spec.after and status.slot_kind is None:
            reasons[task_id] = WaitReason.UPSTREAM.value  # nothing queued: scheduler or not
        elif not scheduled:
            if status.next_run_at is not None and status.next_run_at <= now:
                reasons[task_id] = NO_SCHEDULER
        elif (reason := recorded.get(task_id)) is not None:
            reasons[task_id] = reason.value
    return reasons


def wait_words(
    snapshot: TaskSnapshot, waiting: str | None, names: Mapping[TaskId, str] | None = None
) -> str:
    """A wait reason as a table cell: ``worker``, ``key backup``, ``no scheduler``,
    ``for A (3)`` (its upstream; ``names``: every task's name by id)."""
    if waiting is None:
        return NONE_TEXT
    if waiting == WaitReason.UPSTREAM.value:
        return waiting_for(snapshot, names or {}).removeprefix("waiting ")
    if waiting in (WaitReason.NODE.value, WaitReason.NO_NODE.value):
        return node_wanted(snapshot.spec, none_answers=waiting == WaitReason.NO_NODE.value)
    words = _WAIT_WORDS.get(waiting, waiting.replace("_", " "))
    key = snapshot.spec.concurrency_key
    return f"{words} {key}" if waiting == WaitReason.CONCURRENCY_KEY.value and key else words


# --------------------------------------------------------------------------- JSON


# The names ``recurrence`` and ``retry`` have had in this JSON since before the shape:
# the shape's values (``core.shape``), with three keys under their older names.
_CLI_NAMES = {"seconds": "interval_seconds", "base": "delay_seconds", "max": "max_delay_seconds"}


def _cli_names(value: dict[str, Any]) -> dict[str, Any]:
    return {_CLI_NAMES.get(key, key): item for key, item in value.items() if key != "v"}


def task_json(snapshot: TaskSnapshot, waiting: str | None = None) -> dict[str, Any]:
    """Everything about a task, as plain JSON values (the ``show --json`` contract).

    ``waiting`` is what it waits for (see ``wait_reasons``).
    """
    spec, status = snapshot.spec, snapshot.status
    definition = shape.task_json(spec)
    return {
        "id": spec.id,
        "name": spec.name,
        "state": status.state.value,
        "priority": spec.priority,
        "next_run_at": iso(status.next_run_at),
        "next_run_kind": status.slot_kind.value if status.slot_kind else None,
        "attempts": status.attempt,
        "max_attempts": spec.max_attempts,
        "schedule": spec.describe_schedule(),
        "command": spec.command.line,
        "shell": spec.command.use_shell,
        "shell_path": spec.command.shell_path,
        "cwd": spec.command.cwd,
        "env": spec.command.env_dict,
        "paused": spec.paused,
        "last_outcome": status.last_outcome.value if status.last_outcome else None,
        "last_run_at": iso(status.last_run_at),
        "concurrency_key": spec.concurrency_key,
        "waiting": waiting,
        "first_run_at": iso(spec.first_run_at),
        "recurrence": _cli_names(definition["schedule"]),
        "retry": _cli_names(definition["retry"]),
        "timeout_seconds": _seconds(spec.timeout),
        "overlap": spec.overlap.value,
        "misfire": spec.misfire.value,
        "misfire_grace_seconds": spec.misfire_grace.total_seconds(),
        "notify": spec.notify.text if spec.notify else None,
        "on_wake": spec.on_wake.text if spec.on_wake else None,
        # The task's definition in its one shape, exact to the microsecond: what an
        # export file holds, and what 'taskgui import' reads back.
        "definition": definition,
    }


def run_json(run: RunRecord) -> dict[str, Any]:
    """One run of history as plain JSON values (the ``history --json`` contract): the
    shape's run (``core.shape.task``), its times in milliseconds like the rest here."""
    return shape.run_json(run, moment=_iso_ms)


def _iso_ms(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat(timespec="milliseconds")


# ------------------------------------------------------------------------- tables


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], numeric: set[int]) -> list[str]:
    """Columns padded to their widest cell; ``numeric`` columns are right-aligned."""
    widths = [len(header) for header in headers]
    for row in rows:
        widths = [max(width, len(cell)) for width, cell in zip(widths, row, strict=True)]

    def line(cells: Sequence[str]) -> str:
        padded = (
            cell.rjust(width) if index in numeric else cell.ljust(width)
            for index, (cell, width) in enumerate(zip(cells, widths, strict=True))
        )
        return "  ".join(padded).rstrip()

    return [line(headers), *(line(row) for row in rows)]


def task_table(
    snapshots: Sequence[TaskSnapshot],
    waiting: Mapping[TaskId, str] | None = None,
    names: Mapping[TaskId, str] | None = None,
) -> list[str]:
    """The ``list`` view: one line per task, the columns a person scans for."""
    waits = waiting or {}
    names = names if names is not None else {snap.id: snap.spec.name for snap in snapshots}
    rows = [
        [
            str(snap.spec.id),
            _shorten(snap.spec.name, NAME_WIDTH),
            snap.status.state.value,
            _shorten(wait_words(snap, waits.get(snap.spec.id), names), NAME_WIDTH),
            str(snap.spec.priority),
            local(snap.status.next_run_at),
            _shorten(snap.spec.describe_schedule(), SCHEDULE_WIDTH),
            attempts_text(snap),
        ]
        for snap in snapshots
    ]
    headers = ("ID", "NAME", "STATE", "WAITING", "PRI", "NEXT RUN", "SCHEDULE", "ATTEMPTS")
    return table(headers, rows, numeric={0, 4, 7})


def _relative(moment: datetime | None, now: datetime) -> str:
    if moment is None:
        return NONE_TEXT
    delta = moment - now
    when = f"in {format_duration(delta)}" if delta.total_seconds() >= 0 else "due now"
    return f"{local(moment)} ({when})"


def _paused_text(spec: TaskSpec, now: datetime) -> str:
    if not spec.paused:
        return "no"
    if spec.paused_until is None:
        return "yes"
    return f"yes, until {_relative(spec.paused_until, now)}; it resumes by itself"


def _next_run_text(snapshot: TaskSnapshot, now: datetime) -> str:
    """When it runs next; a task whose schedule is refused runs at no time at all,
    whatever time its row still holds."""
    if snapshot.spec.recurrence.refusal is not None:
        return "none: its schedule is refused (see schedule)"
    return _relative(snapshot.status.next_run_at, now)


def _conditions_text(spec: TaskSpec) -> str:
    conditions = spec.conditions
    text = conditions.describe()
    if text and conditions.give_up_after is not None:
        text += f"; give up after {format_duration(conditions.give_up_after)}"
    return text


def task_lines(
    snapshot: TaskSnapshot,
    now: datetime,
    waiting: str | None = None,
    after: Sequence[tuple[str, str]] = (),
    names: Mapping[TaskId, str] | None = None,
) -> list[str]:
    """The ``show`` view: ``key: value`` lines with the keys aligned; ``after``: the
    lines for the tasks before and after it (``cli.dependencies.show_pairs``)."""
    spec, status = snapshot.spec, snapshot.status
    state = status.state.value
    if waiting == WaitReason.UPSTREAM.value:
        state += f" ({waiting_for(snapshot, names or {})})"
    elif waiting is not None and waiting != PAUSED:
        state += f" (waiting: {wait_words(snapshot, waiting)})"
    command = spec.command
    env = ", ".join(f"{name}={value}" for name, value in command.env) or NONE_TEXT
    pairs = [
        ("id", str(spec.id)),
        ("name", spec.name),
        ("state", state),
        ("command", command.line),
        ("shell", _shell_text(command)),
        ("cwd", command.cwd or NONE_TEXT),
        ("env", env),
        ("schedule", spec.describe_schedule()),
        ("first run", local(spec.first_run_at)),
        ("next run", _next_run_text(snapshot, now)),
        ("next run is", status.slot_kind.value if status.slot_kind else NONE_TEXT),
        ("priority", str(spec.priority)),
        ("attempts", attempts_text(snapshot)),
        ("retry", describe_retry(spec.retry)),
        ("timeout", format_duration(spec.timeout) if spec.timeout else "none"),
        ("concurrency key", spec.concurrency_key or NONE_TEXT),
        ("overlap", spec.overlap.value),
        ("misfire", f"{spec.misfire.value} (grace {format_duration(spec.misfire_grace)})"),
        ("paused", _paused_text(spec, now)),
        ("spread", spec.spread.describe() if spec.spread else NONE_TEXT),
        ("conditions", _conditions_text(spec) or NONE_TEXT),
        *after,
        ("notify", spec.notify.text if spec.notify else "default (Settings)"),
        ("on wake", spec.on_wake.text if spec.on_wake else "default (Settings)"),
        ("last outcome", status.last_outcome.value if status.last_outcome else NONE_TEXT),
        ("last run", local(status.last_run_at)),
    ]
    width = max(len(key) for key, _ in pairs) + 1
    return [f"{key + ':':<{width}} {visible(value)}" for key, value in pairs]


def _duration(run: RunRecord) -> str:
    if run.started_at is None or run.finished_at is None:
        return NONE_TEXT
    return format_duration(run.finished_at - run.started_at)


def _outcome_word(run: RunRecord) -> str:
    """A run's outcome; one still open is running, or waiting where no node took it yet
    (a shared schedule's dispatched run has no start until a node claims it)."""
    if run.outcome is not None:
        return run.outcome.value
    return "running" if run.started_at is not None else "waiting"


def history_table(runs: Sequence[RunRecord]) -> list[str]:
    """The ``history`` view, newest first (the order the repository returns)."""
    rows = [
        [
            str(run.id),
            str(run.attempt),
            run.kind.value,
            local(run.scheduled_at),
            local(run.started_at),
            _duration(run),
            _outcome_word(run),
            NONE_TEXT if run.exit_code is None else str(run.exit_code),
            _shorten(run.error or "", ERROR_WIDTH),
        ]
        for run in runs
    ]
    headers = ("RUN", "ATTEMPT", "KIND", "SCHEDULED", "STARTED", "TOOK", "OUTCOME", "EXIT", "ERROR")
    return table(headers, rows, numeric={0, 1, 7})


def history_outputs(runs: Sequence[RunRecord]) -> list[str]:
    """What each run printed (``history --output``): a heading naming the run, then its
    lines, each made safe for a terminal (an escape sequence a command printed is
    shown, not obeyed), indented so they cannot pass for taskgui's own lines."""
    lines: list[str] = []
    for run in runs:
        heading = f"run {run.id}, attempt {run.attempt}, {_outcome_word(run)}"
        if run.started_at is not None:
            heading += f", started {local(run.started_at)}"
        lines += ["", f"--- {heading} ---"]
        if run.output:
            # By "\n" only: splitlines() also breaks at a form feed, a lone "\r" (a
            # progress bar) or U+2028, which must be shown as escapes instead.
            text = run.output[:-1] if run.output.endswith("\n") else run.output
            lines += [f"  {visible(line.removesuffix(chr(13)))}" for line in text.split("\n")]
        elif run.finished_at is None:
            lines.append("  (nothing printed yet)")
        else:
            lines.append("  (printed nothing)")
    return lines


def _shell_text(command: Command) -> str:
    if not command.use_shell:
        return "no (split into arguments)"
    return f"yes ({command.shell_path})" if command.shell_path else "yes"
