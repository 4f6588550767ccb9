"""Rows <-> core objects. Times are integer microseconds since the epoch (UTC), exact.

Schedules and policies are versioned JSON objects (``{"v": 1, ...}``), never pickle:
readable with any SQLite tool, and safe to load. A value from a newer encoder, or one
that no longer validates, raises CodecError so the row can be quarantined rather than
silently dropped.

Loading 100,000 tasks must be fast, and most tasks share a handful of retry policies
and schedules, so decoded JSON values are memoised by their text.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from taskgui.core.errors import TaskguiError
from taskgui.core.recurrence import Cron, Every, EveryMode, Once, Recurrence
from taskgui.core.retry import Backoff, RetryPolicy
from taskgui.core.states import MisfirePolicy, OverlapPolicy, RunOutcome, SlotKind, TaskState
from taskgui.core.status import TaskSnapshot, TaskStatus
from taskgui.core.task import Command, TaskSpec
from taskgui.store.errors import CodecError

JSON_VERSION = 1
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MEMO_LIMIT = 10_000

T = TypeVar("T")

TASK_COLUMNS = (
    "id",
    "name",
    "command",
    "priority",
    "first_run_at",
    "recurrence",
    "retry",
    "timeout",
    "concurrency_key",
    "overlap",
    "misfire",
    "misfire_grace",
    "paused",
    "state",
    "attempt",
    "next_run_at",
    "slot_kind",
    "scheduled_at",
    "slot_attempt",
    "deferred_at",
    "last_outcome",
    "last_run_at",
)
STATUS_COLUMNS = TASK_COLUMNS[13:]


# ------------------------------------------------------------------ times


def to_us(value: datetime) -> int:
    """Aware datetime -> integer microseconds since the epoch (exact)."""
    delta = value - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def opt_to_us(value: datetime | None) -> int | None:
    return None if value is None else to_us(value)


def from_us(value: int) -> datetime:
    return _EPOCH + timedelta(microseconds=value)


def opt_from_us(value: int | None) -> datetime | None:
    return None if value is None else _EPOCH + timedelta(microseconds=value)


def _seconds(value: timedelta | None) -> float | None:
    return None if value is None else value.total_seconds()


# ------------------------------------------------------------------- JSON


def encode_command(command: Command) -> str:
    return json.dumps(
        {
            "v": JSON_VERSION,
            "line": command.line,
            "shell": command.use_shell,
            "cwd": command.cwd,
            "env": [list(pair) for pair in command.env],
        },
        separators=(",", ":"),
    )


def encode_recurrence(recurrence: Recurrence) -> str:
    body: dict[str, Any]
    if isinstance(recurrence, Every):
        body = {"kind": "every", "seconds": recurrence.interval.total_seconds()}
        body["mode"] = recurrence.mode.value
    elif isinstance(recurrence, Cron):
        body = {"kind": "cron", "expr": recurrence.expr, "tz": recurrence.tz}
    else:
        body = {"kind": "once"}
    return json.dumps({"v": JSON_VERSION, **body}, separators=(",", ":"))


def encode_retry(policy: RetryPolicy) -> str:
    return json.dumps(
        {
            "v": JSON_VERSION,
            "backoff": policy.backoff.value,
            "max_attempts": policy.max_attempts,
            "base": policy.base_delay.total_seconds(),
            "max": policy.max_delay.total_seconds(),
            "factor": policy.factor,
            "jitter": policy.jitter,
        },
        separators=(",", ":"),
    )


def _load_json(text: str, what: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except (TypeError, ValueError) as error:
        raise CodecError(f"the stored {what} is not valid JSON ({error})") from None
    if not isinstance(value, dict):
        raise CodecError(f"the stored {what} is not a JSON object")
    version = value.get("v")
    if version != JSON_VERSION:
        raise CodecError(
            f"the stored {what} has format version {version!r}; this taskgui reads "
            f"version {JSON_VERSION} (was the file written by a newer taskgui?)"
        )
    return value


def _decode_command(text: str) -> Command:
    data = _load_json(text, "command")
    return Command(
        line=data["line"],
        use_shell=bool(data.get("shell", True)),
        cwd=data.get("cwd"),
        env=tuple((str(k), str(v)) for k, v in data.get("env", [])),
    )


def _decode_recurrence(text: str) -> Recurrence:
    data = _load_json(text, "schedule")
    kind = data.get("kind")
    if kind == "once":
        return Once()
    if kind == "every":
        return Every(timedelta(seconds=data["seconds"]), EveryMode(data.get("mode", "fixed_rate")))
    if kind == "cron":
        return Cron(data["expr"], data.get("tz", "UTC"))
    raise CodecError(f"unknown schedule kind {kind!r}")


def _decode_retry(text: str) -> RetryPolicy:
    data = _load_json(text, "retry policy")
    return RetryPolicy(
        backoff=Backoff(data["backoff"]),
        max_attempts=int(data["max_attempts"]),
        base_delay=timedelta(seconds=data["base"]),
        max_delay=timedelta(seconds=data["max"]),
        factor=float(data.get("factor", 2.0)),
        jitter=bool(data.get("jitter", False)),
    )


class _Memo:
    """Decoded values by their JSON text; frozen values are safe to share."""

    def __init__(self) -> None:
        self._cache: dict[tuple[str, str], Any] = {}

    def get(self, kind: str, text: str, decode: Callable[[str], T]) -> T:
        key = (kind, text)
        try:
            return self._cache[key]  # type: ignore[no-any-return]
        except KeyError:
            pass
        value = decode(text)
        if len(self._cache) >= _MEMO_LIMIT:
            self._cache.clear()
        self._cache[key] = value
        return value


# -------------------------------------------------------------------- rows


def spec_values(spec: TaskSpec) -> tuple[Any, ...]:
    """The definition columns (``TASK_COLUMNS[1:13]``) of a task row."""
    return (
        spec.name,
        encode_command(spec.command),
        spec.priority,
        to_us(spec.first_run_at),
        encode_recurrence(spec.recurrence),
        encode_retry(spec.retry),
        _seconds(spec.timeout),
        spec.concurrency_key,
        spec.overlap.value,
        spec.misfire.value,
        spec.misfire_grace.total_seconds(),
        int(spec.paused),
    )


def status_values(status: TaskStatus) -> tuple[Any, ...]:
    """The status columns (``STATUS_COLUMNS``) of a task row."""
    return (
        status.state.value,
        status.attempt,
        opt_to_us(status.next_run_at),
        status.slot_kind.value if status.slot_kind else None,
        opt_to_us(status.scheduled_at),
        status.slot_attempt,
        opt_to_us(status.deferred_at),
        status.last_outcome.value if status.last_outcome else None,
        opt_to_us(status.last_run_at),
    )


class RowDecoder:
    """Decodes task rows (in ``TASK_COLUMNS`` order), sharing repeated JSON values."""

    def __init__(self) -> None:
        self._memo = _Memo()

    def snapshot(self, row: tuple[Any, ...]) -> TaskSnapshot:
        """Raise CodecError, naming the column, when the row cannot be decoded."""
        try:
            return self._snapshot(row)
        except CodecError:
            raise
        except (TaskguiError, KeyError, ValueError, TypeError, OverflowError) as error:
            raise CodecError(f"task {row[0]}: {error}") from None

    def _snapshot(self, row: tuple[Any, ...]) -> TaskSnapshot:
        memo = self._memo
        (
            task_id,
            name,
            command,
            priority,
            first_run_at,
            recurrence,
            retry,
            timeout,
            concurrency_key,
            overlap,
            misfire,
            misfire_grace,
            paused,
            state,
            attempt,
            next_run_at,
            slot_kind,
            scheduled_at,
            slot_attempt,
            deferred_at,
            last_outcome,
            last_run_at,
        ) = row
        spec = TaskSpec(
            id=task_id,
            name=name,
            command=memo.get("command", command, _decode_command),
            priority=priority,
            first_run_at=from_us(first_run_at),
            recurrence=memo.get("recurrence", recurrence, _decode_recurrence),
            retry=memo.get("retry", retry, _decode_retry),
            timeout=None if timeout is None else timedelta(seconds=timeout),
            concurrency_key=concurrency_key,
            overlap=OverlapPolicy(overlap),
            misfire=MisfirePolicy(misfire),
            misfire_grace=timedelta(seconds=misfire_grace),
            paused=bool(paused),
        )
        status = TaskStatus(
            state=TaskState(state),
            attempt=attempt,
            next_run_at=opt_from_us(next_run_at),
            slot_kind=SlotKind(slot_kind) if slot_kind else None,
            scheduled_at=opt_from_us(scheduled_at),
            slot_attempt=slot_attempt,
            deferred_at=opt_from_us(deferred_at),
            last_outcome=RunOutcome(last_outcome) if last_outcome else None,
            last_run_at=opt_from_us(last_run_at),
        )
        return TaskSnapshot(spec, status)
