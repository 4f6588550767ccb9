"""Rows <-> core objects. Times are integer microseconds since the epoch (UTC), exact.

Schedules and policies are versioned JSON objects (``{"v": 1, ...}``), never pickle:
readable with any SQLite tool, and safe to load. A value from a newer encoder, or one
that no longer validates, raises CodecError so the row can be quarantined rather than
silently dropped.

Loading 100,000 tasks must be fast, and most tasks share a handful of retry policies
and schedules, so decoded JSON values are memoised by their text. Rows in the form this
module writes take a fast path (see ``RowDecoder``); anything else goes through the
validating constructors, so a row that no longer validates is still caught.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import Any, TypeVar

from taskgui.core.duration import MAX_DURATION
from taskgui.core.errors import TaskguiError
from taskgui.core.notify_rules import NotifyRule, parse_rule
from taskgui.core.recurrence import Cron, Every, EveryMode, Once, Recurrence, stored_cron
from taskgui.core.retry import Backoff, RetryPolicy
from taskgui.core.states import MisfirePolicy, OverlapPolicy, RunOutcome, SlotKind, TaskState
from taskgui.core.status import TaskSnapshot, TaskStatus
from taskgui.core.task import (
    MAX_COMMAND_LENGTH,
    MAX_KEY_LENGTH,
    PRIORITY_MAX,
    PRIORITY_MIN,
    Command,
    TaskSpec,
    name_is_canonical,
)
from taskgui.store.errors import CodecError

JSON_VERSION = 1
# A command that names its shell (a crontab's SHELL=) is written as version 2, so a
# taskgui from before sets the task aside instead of running it with /bin/sh; every
# other command stays version 1, readable by any taskgui.
COMMAND_SHELL_VERSION = 2
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_ZERO = timedelta(0)
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
    "notify",
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
STATUS_COLUMNS = TASK_COLUMNS[14:]


# ------------------------------------------------------------------ times


def to_us(value: datetime) -> int:
    """Aware datetime -> integer microseconds since the epoch (exact)."""
    delta = value - _EPOCH
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def opt_to_us(value: datetime | None) -> int | None:
    return None if value is None else to_us(value)


def from_us(value: int) -> datetime:
    return _EPOCH + timedelta(0, 0, value)  # (days, seconds, microseconds)


def opt_from_us(value: int | None) -> datetime | None:
    return None if value is None else _EPOCH + timedelta(0, 0, value)


def _seconds(value: timedelta | None) -> float | None:
    return None if value is None else value.total_seconds()


# ------------------------------------------------------------------- JSON


# Shared encoders: ``json.dumps`` with non-default arguments builds a new JSONEncoder on
# every call. ``_json_string`` turns a str into its JSON literal, exactly as json.dumps.
_json_compact = json.JSONEncoder(separators=(",", ":")).encode
_json_string = json.JSONEncoder().encode


_SHELL_LINE_HEAD = f'{{"v":{JSON_VERSION},"line":'
_SHELL_LINE_TAIL = ',"shell":true,"cwd":null,"env":[]}'


def encode_command(command: Command) -> str:
    """The command as versioned JSON: ``{"v":1,"line":...,"shell":...,"cwd":...,"env":[...]}``.

    Written out by hand rather than through json.dumps of a dict, because every add and
    every status change encodes its command and lines are usually unique (memoising
    them would not help); this is several times faster, and the text is identical.
    """
    string = _json_string
    path = command.shell_path
    if not command.env and command.cwd is None and command.use_shell and path is None:
        return _SHELL_LINE_HEAD + string(command.line) + _SHELL_LINE_TAIL  # the usual one
    env = ",".join(f"[{string(name)},{string(value)}]" for name, value in command.env)
    cwd = "null" if command.cwd is None else string(command.cwd)
    shell = "true" if command.use_shell else "false"
    version, shell_path = (
        (JSON_VERSION, "")
        if path is None
        else (COMMAND_SHELL_VERSION, f',"shell_path":{string(path)}')
    )
    return (
        f'{{"v":{version},"line":{string(command.line)},"shell":{shell},'
        f'"cwd":{cwd},"env":[{env}]{shell_path}}}'
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
    return _json_compact({"v": JSON_VERSION, **body})


def encode_retry(policy: RetryPolicy) -> str:
    return _json_compact(
        {
            "v": JSON_VERSION,
            "backoff": policy.backoff.value,
            "max_attempts": policy.max_attempts,
            "base": policy.base_delay.total_seconds(),
            "max": policy.max_delay.total_seconds(),
            "factor": policy.factor,
            "jitter": policy.jitter,
        }
    )


# Most tasks share a handful of schedules and policies: encode each distinct one once.
_recurrence_text = lru_cache(maxsize=256)(encode_recurrence)
_retry_text = lru_cache(maxsize=256)(encode_retry)


def _load_json(text: str, what: str, newest: int = JSON_VERSION) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except (TypeError, ValueError) as error:
        raise CodecError(f"the stored {what} is not valid JSON ({error})") from None
    if not isinstance(value, dict):
        raise CodecError(f"the stored {what} is not a JSON object")
    version = value.get("v")
    if type(version) is not int or not JSON_VERSION <= version <= newest:
        raise CodecError(
            f"the stored {what} has format version {version!r}; this taskgui reads "
            f"version {_versions(newest)} (was the file written by a newer taskgui?)"
        )
    return value


def _versions(newest: int) -> str:
    return str(JSON_VERSION) if newest == JSON_VERSION else f"{JSON_VERSION} to {newest}"


def _decode_command(text: str) -> Command:
    data = _load_json(text, "command", COMMAND_SHELL_VERSION)
    return Command(
        line=data["line"],
        use_shell=bool(data.get("shell", True)),
        cwd=data.get("cwd"),
        env=tuple((str(k), str(v)) for k, v in data.get("env", [])),
        shell_path=data.get("shell_path"),
    )


def _decode_recurrence(text: str) -> Recurrence:
    data = _load_json(text, "schedule")
    kind = data.get("kind")
    if kind == "once":
        return Once()
    if kind == "every":
        return Every(timedelta(seconds=data["seconds"]), EveryMode(data.get("mode", "fixed_rate")))
    if kind == "cron":
        # A schedule this taskgui refuses (an older one accepted it) is kept, and its
        # task loads paused with the reason: see RefusedCron.
        return stored_cron(data["expr"], data.get("tz", "UTC"))
    raise CodecError(f"unknown schedule kind {kind!r}")


def notify_text(rule: NotifyRule | None) -> str | None:
    """The ``notify`` column: the rule's text (``after:3``), NULL for the default."""
    return None if rule is None else rule.text


@lru_cache(maxsize=64)
def decode_notify(text: str) -> NotifyRule:
    """A stored rule; few distinct ones exist, so one object serves every task."""
    return parse_rule(text)


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
    """The definition columns (``TASK_COLUMNS[1:14]``) of a task row."""
    return (
        spec.name,
        encode_command(spec.command),
        spec.priority,
        to_us(spec.first_run_at),
        _recurrence_text(spec.recurrence),
        _retry_text(spec.retry),
        _seconds(spec.timeout),
        spec.concurrency_key,
        spec.overlap.value,
        spec.misfire.value,
        spec.misfire_grace.total_seconds(),
        int(spec.paused),
        notify_text(spec.notify),
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


_PENDING = TaskState.PENDING.value
_PAUSED = TaskState.PAUSED.value
_OCCURRENCE = SlotKind.OCCURRENCE.value


@lru_cache(maxsize=1024)
def _cron_first_match(recurrence: Cron, start: datetime) -> datetime:
    # A first match costs several times a row's other work; an import gives its cron
    # tasks a handful of schedules and one start time.
    return recurrence.first_at_or_after(start)


def new_task_values(spec: TaskSpec) -> tuple[Any, ...]:
    """What a new task's row needs from Python: ``NEW_TASK_VALUES``, in that order.

    The rest of the row follows from these (see ``new_task_row``), so an insert can
    compute it in SQL instead of binding ten more parameters per task: binding is most
    of what a bulk insert costs. ``slot_at`` is the first occurrence (for cron, its
    first match), ``paused`` an integer.
    """
    first = to_us(spec.first_run_at)
    recurrence = spec.recurrence
    if isinstance(recurrence, Cron):
        slot_at = _cron_first_match(recurrence, spec.first_run_at)
    else:
        slot_at = recurrence.first_at_or_after(spec.first_run_at)
    timeout = spec.timeout
    return (
        spec.id,
        spec.name,
        encode_command(spec.command),
        spec.priority,
        first,
        _recurrence_text(recurrence),
        _retry_text(spec.retry),
        None if timeout is None else timeout.total_seconds(),
        spec.concurrency_key,
        spec.overlap._value_,  # what .value returns, without the enum property's cost
        spec.misfire._value_,
        spec.misfire_grace.total_seconds(),
        1 if spec.paused else 0,
        None if spec.notify is None else spec.notify.text,
        first if slot_at is spec.first_run_at else to_us(slot_at),
    )


NEW_TASK_VALUES = (*TASK_COLUMNS[:14], "slot_at")


def new_task_row(spec: TaskSpec, now_us: int) -> tuple[Any, ...]:
    """A new task's whole row: ``TASK_COLUMNS``, then ``created_at`` and ``updated_at``.

    The same values as ``(spec.id, *spec_values(spec), *status_values(initial_status(
    spec)), now_us, now_us)``: the first occurrence queued, attempt 0.
    """
    *definition, slot = new_task_values(spec)
    state = _PAUSED if spec.paused else _PENDING
    return (*definition, state, 0, slot, _OCCURRENCE, slot, 1, None, None, None, now_us, now_us)


def _unchecked_constructor(cls: type[T]) -> Callable[..., T]:
    """A constructor for a frozen, slotted dataclass that skips ``__init__`` and its checks.

    Only for the decoder's fast path below: it sets each slot directly, so whatever
    ``__post_init__`` would check or normalise must already hold for the values. Its
    source is generated from the fields, the way dataclasses writes ``__init__``, so it
    cannot fall behind a new field, and unrolled, which halves the cost of a loop.
    """
    names = [field.name for field in dataclasses.fields(cls)]  # type: ignore[arg-type]
    namespace: dict[str, Any] = {"_new": object.__new__, "_cls": cls}
    namespace.update({f"_set_{name}": cls.__dict__[name].__set__ for name in names})
    body = "".join(f"    _set_{name}(obj, {name})\n" for name in names)
    source = f"def build(*, {', '.join(names)}):\n    obj = _new(_cls)\n{body}    return obj\n"
    exec(source, namespace)
    build: Callable[..., T] = namespace["build"]
    return build


_new_command = _unchecked_constructor(Command)
_new_spec = _unchecked_constructor(TaskSpec)
_new_snapshot = TaskSnapshot  # a NamedTuple: nothing to skip

_OVERLAP = {policy.value: policy for policy in OverlapPolicy}
_MISFIRE = {policy.value: policy for policy in MisfirePolicy}
_STATE = {state.value: state for state in TaskState}
_SLOT_KIND = {kind.value: kind for kind in SlotKind}
_OUTCOME = {outcome.value: outcome for outcome in RunOutcome}

# encode_command's text for a command with no cwd and no environment, around the line.
_COMMAND_HEAD = f'{{"v":{JSON_VERSION},"line":"'
_COMMAND_TAIL_SHELL = '","shell":true,"cwd":null,"env":[]}'
_COMMAND_TAIL_ARGV = '","shell":false,"cwd":null,"env":[]}'


def _plain_command(text: str) -> Command | None:
    """Decode the usual command text without json.loads or Command's checks; None if unsure.

    Commands are mostly unique, so the memo cannot help them, and json.loads plus
    validation was the largest part of a load. Taken only when the line is printable
    ASCII without a quote or a backslash: then the JSON string is the line itself,
    verbatim. Other commands take the validating path.
    """
    if not text.startswith(_COMMAND_HEAD):
        return None
    if text.endswith(_COMMAND_TAIL_SHELL):
        use_shell, end = True, len(text) - len(_COMMAND_TAIL_SHELL)
    elif text.endswith(_COMMAND_TAIL_ARGV):
        use_shell, end = False, len(text) - len(_COMMAND_TAIL_ARGV)
    else:
        return None
    start = len(_COMMAND_HEAD)
    if end < start:
        return None
    line = text[start:end]
    if '"' in line or "\\" in line or not (line.isascii() and line.isprintable()):
        return None
    # Command's own checks, for exactly this shape (NUL cannot be printable ASCII).
    if not line.strip() or len(line) > MAX_COMMAND_LENGTH:
        return None
    return _new_command(line=line, use_shell=use_shell, cwd=None, env=(), shell_path=None)


_WAITING = frozenset({TaskState.PENDING, TaskState.RETRYING})


def _paused_if_refused(snapshot: TaskSnapshot) -> TaskSnapshot:
    """A task whose schedule is refused is paused (TaskSpec saw to its definition);
    its stored state says what it was before, so show what the engine will make of it."""
    status = snapshot.status
    if (
        snapshot.spec.recurrence.refusal is None
        or status.state not in _WAITING
        or status.slot_kind is SlotKind.MANUAL
    ):
        return snapshot
    return TaskSnapshot(snapshot.spec, status._replace(state=TaskState.PAUSED))


def _task_id(row: tuple[Any, ...]) -> object:
    return row[0] if row else "?"


class RowDecoder:
    """Decodes task rows (in ``TASK_COLUMNS`` order), sharing repeated JSON values.

    Two paths. The fast one takes a row in exactly the form ``new_task_row`` and the
    update statements write (types, stripped text, values in range, known enum values)
    and builds the frozen objects without running their ``__post_init__`` checks: every
    such value passed them before it was written, and re-checking 100,000 tasks was
    most of a cold start. A row that is not in that form in any way (edited by hand,
    written by another version) takes the validating path below it, which normalises it
    or raises CodecError so the task is quarantined. ``tests/store/test_codec_fast_path``
    holds the two paths to the same answers.
    """

    def __init__(self) -> None:
        self._memo = _Memo()
        # The fast path's own memos: plain dicts, one lookup per value.
        self._recurrences: dict[str, Recurrence] = {}
        self._retries: dict[str, RetryPolicy] = {}
        self._durations: dict[float, timedelta] = {}

    def snapshot(self, row: tuple[Any, ...]) -> TaskSnapshot:
        """Raise CodecError, naming the column, when the row cannot be decoded."""
        try:
            snapshot = self._trusted_snapshot(row)
        except Exception:
            # The fast path never judges a row: whatever surprised it, the validating
            # path decides, and says what is wrong.
            snapshot = None
        if snapshot is not None:
            return _paused_if_refused(snapshot)
        try:
            return _paused_if_refused(self._snapshot(row))
        except CodecError:
            raise
        except KeyError as error:
            raise CodecError(
                f"task {_task_id(row)}: a stored value lacks its {error} field"
            ) from None
        except (TaskguiError, ValueError, TypeError, OverflowError) as error:
            raise CodecError(f"task {_task_id(row)}: {error}") from None
        except Exception as error:
            # Anything else a row from disk can provoke (an AttributeError from a
            # wrongly typed JSON value, say) is still that row's problem: quarantine
            # it, never let one row stop the whole load.
            raise CodecError(
                f"task {_task_id(row)}: unexpected {type(error).__name__} ({error})"
            ) from None

    def _duration(self, seconds: float) -> timedelta:
        # Grace periods and timeouts repeat: share one timedelta per value.
        try:
            return self._durations[seconds]
        except KeyError:
            value = self._durations[seconds] = timedelta(seconds=seconds)
            return value

    def _trusted_snapshot(self, row: tuple[Any, ...]) -> TaskSnapshot | None:
        (
            task_id,
            name,
            command_text,
            priority,
            first_run_at,
            recurrence_text,
            retry_text,
            timeout_seconds,
            concurrency_key,
            overlap_text,
            misfire_text,
            grace_seconds,
            paused,
            notify_text_,
            state_text,
            attempt,
            next_run_at,
            slot_kind_text,
            scheduled_at,
            slot_attempt,
            deferred_at,
            last_outcome_text,
            last_run_at,
        ) = row
        # TaskSpec.__post_init__'s checks, for values already in canonical form.
        if not (
            type(task_id) is int
            and task_id >= 0
            and type(name) is str
            and name_is_canonical(name)
            and type(priority) is int
            and PRIORITY_MIN <= priority <= PRIORITY_MAX
            and type(first_run_at) is int
            and type(command_text) is str
            and (
                concurrency_key is None
                or (
                    type(concurrency_key) is str
                    and 0 < len(concurrency_key) <= MAX_KEY_LENGTH
                    and concurrency_key.strip() == concurrency_key
                    and "\0" not in concurrency_key
                )
            )
            and type(grace_seconds) is float
            and (timeout_seconds is None or type(timeout_seconds) is float)
        ):
            return None
        overlap = _OVERLAP.get(overlap_text)
        misfire = _MISFIRE.get(misfire_text)
        state = _STATE.get(state_text)
        durations = self._durations
        grace = durations.get(grace_seconds) or self._duration(grace_seconds)
        timeout = (
            None
            if timeout_seconds is None
            else durations.get(timeout_seconds) or self._duration(timeout_seconds)
        )
        command = _plain_command(command_text)
        if (
            overlap is None
            or misfire is None
            or state is None
            or not _ZERO <= grace <= MAX_DURATION
            or (timeout is not None and not _ZERO < timeout <= MAX_DURATION)
        ):
            return None
        memo = self._memo
        if command is None:
            command = memo.get("command", command_text, _decode_command)
        recurrence = self._recurrences.get(recurrence_text)
        if recurrence is None:
            recurrence = memo.get("recurrence", recurrence_text, _decode_recurrence)
            self._recurrences[recurrence_text] = recurrence
        retry = self._retries.get(retry_text)
        if retry is None:
            retry = self._retries[retry_text] = memo.get("retry", retry_text, _decode_retry)
        first = _EPOCH + timedelta(0, 0, first_run_at)  # from_us, inlined
        # A pending task's next run is usually its first: share the datetime.
        next_at = first if next_run_at == first_run_at else opt_from_us(next_run_at)
        spec = _new_spec(
            id=task_id,
            name=name,
            command=command,
            priority=priority,
            first_run_at=first,
            recurrence=recurrence,
            retry=retry,
            timeout=timeout,
            concurrency_key=concurrency_key,
            overlap=overlap,
            misfire=misfire,
            misfire_grace=grace,
            # TaskSpec pauses a task whose schedule is refused; so must this copy.
            paused=bool(paused) or recurrence.refusal is not None,
            notify=None if notify_text_ is None else decode_notify(notify_text_),
        )
        status = TaskStatus(  # no checks of its own to skip
            state=state,
            attempt=attempt,
            next_run_at=next_at,
            slot_kind=_SLOT_KIND[slot_kind_text] if slot_kind_text else None,
            scheduled_at=next_at if scheduled_at == next_run_at else opt_from_us(scheduled_at),
            slot_attempt=slot_attempt,
            deferred_at=None if deferred_at is None else from_us(deferred_at),
            last_outcome=_OUTCOME[last_outcome_text] if last_outcome_text else None,
            last_run_at=None if last_run_at is None else from_us(last_run_at),
            # The engine's live fields, never stored.
            running=0,
            running_since=None,
            waiting=None,
        )
        return _new_snapshot(spec=spec, status=status)

    def _snapshot(self, row: tuple[Any, ...]) -> TaskSnapshot:
        """The validating path: every value through its constructor's checks."""
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
            notify,
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
            notify=None if notify is None else decode_notify(notify),
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
