"""Task rows back into core objects: a fast path for the rows the store wrote, and a
validating one for everything else.

Loading 100,000 tasks must be fast, and most tasks share a handful of retry policies
and schedules, so decoded JSON values are memoised by their text. Rows in the form
``codec`` writes take a fast path (see ``RowDecoder``); anything else goes through the
shape's readers (``core.shape.stored``) and the validating constructors, so a row that
no longer validates is still caught, and raises CodecError naming the task.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from datetime import timedelta
from functools import lru_cache
from typing import Any, TypeVar

from taskgui.core.conditions import NO_CONDITIONS
from taskgui.core.duration import MAX_DURATION
from taskgui.core.errors import TaskguiError
from taskgui.core.notify_rules import NotifyRule, parse_rule
from taskgui.core.recurrence import Recurrence
from taskgui.core.retry import RetryPolicy
from taskgui.core.shape import stored
from taskgui.core.shape.fields import SHAPE_VERSION, FieldError
from taskgui.core.shape.rules import Rules, decode_rules_text
from taskgui.core.shape.stored import StoredValueError
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
from taskgui.store.marks import decode_marks
from taskgui.store.times import EPOCH as _EPOCH
from taskgui.store.times import from_us, opt_from_us

JSON_VERSION = SHAPE_VERSION
_ZERO = timedelta(0)
_MEMO_LIMIT = 10_000

T = TypeVar("T")


def _decoded(decode: Callable[[str], T]) -> Callable[[str], T]:
    """A shape reader whose refusal is the store's CodecError, message unchanged."""

    def read(text: str) -> T:
        try:
            return decode(text)
        except StoredValueError as error:
            raise CodecError(str(error)) from None

    return read


def _load_json(text: str, what: str, newest: int = JSON_VERSION) -> dict[str, Any]:
    """The stored JSON object ``text`` holds (``shape.stored.load_object``)."""
    return _decoded(lambda value: stored.load_object(value, what, newest))(text)


_decode_command = _decoded(stored.command_from_text)
_decode_recurrence = _decoded(stored.schedule_from_text)
_decode_retry = _decoded(stored.retry_from_text)


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


@lru_cache(maxsize=64)
def decode_notify(text: str) -> NotifyRule:
    """A stored notification rule (``after:3``); few distinct ones exist, so one object
    serves every task that has it."""
    return parse_rule(text)


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


# The rules column's values as TaskSpec keywords, in decode_rules_text's order.
_RULE_KEYS = tuple("spread conditions paused_until on_wake after only_after on_node on_tag".split())  # noqa: SIM905
_NO_RULES: dict[str, Any] = dict(
    zip(_RULE_KEYS, (None, NO_CONDITIONS, None, None, (), False, None, None), strict=True)
)


def _decode_rules(text: str) -> Rules:
    try:
        return decode_rules_text(text)
    except FieldError as error:
        raise CodecError(str(error)) from None


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
        except CodecError as error:
            raise CodecError(f"task {_task_id(row)}: {error}") from None
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

    def _rules(self, text: str | None) -> dict[str, Any]:
        """A ``rules`` column as TaskSpec keywords (a few distinct texts: memoised)."""
        if text is None:
            return _NO_RULES
        *before, (after, only), node, tag = self._memo.get("rules", text, _decode_rules)
        return dict(zip(_RULE_KEYS, (*before, after, only, node, tag), strict=True))

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
            notify_text,
            rules_text,
            state_text,
            attempt,
            next_run_at,
            slot_kind_text,
            scheduled_at,
            slot_attempt,
            deferred_at,
            last_outcome_text,
            last_run_at,
            after_marks_text,
        ) = row
        if rules_text is not None or after_marks_text is not None:
            # A task with a spread, conditions or upstreams (few): TaskSpec checks them together
            # with its schedule, which only the validating path runs.
            return None
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
            notify=None if notify_text is None else decode_notify(notify_text),
            spread=None,
            conditions=NO_CONDITIONS,
            paused_until=None,
            on_wake=None,
            after=(),
            only_after=False,
            on_node=None,
            on_tag=None,
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
            rules_text,
            state,
            attempt,
            next_run_at,
            slot_kind,
            scheduled_at,
            slot_attempt,
            deferred_at,
            last_outcome,
            last_run_at,
            after_marks_text,
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
            **self._rules(rules_text),
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
            after_marks=decode_marks(after_marks_text, spec),
        )
        return TaskSnapshot(spec, status)
