"""Reading one task of an export file, field by field, blaming the field at fault.

The constructors (``TaskSpec``, ``Command``, ``RetryPolicy``, ``Every``, ``Cron``)
own every rule, and their messages say what is wrong but not where in a file it is.
So each field's JSON type is checked here first (that names the field directly), and
when a constructor still refuses the whole, each value is tried on its own with
every other value at its default: the first that fails alone is the one to blame.
No rule is written twice, and "field 'retry.max_attempts': max attempts must be
between 1 and 1000, not 0" points at the exact spot. The probing only runs on the
error path, so a valid import pays one construction per value.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from enum import StrEnum
from typing import Any, TypeVar

from taskgui.core.errors import InvalidTaskError
from taskgui.core.notify_rules import parse_rule
from taskgui.core.recurrence import Cron, Every, EveryMode, Once, Recurrence, load_zone
from taskgui.core.retry import DEFAULT_BASE_DELAY, DEFAULT_MAX_DELAY, Backoff, RetryPolicy
from taskgui.core.states import MisfirePolicy, OverlapPolicy, TaskState
from taskgui.core.task import DEFAULT_MISFIRE_GRACE, DEFAULT_RETRY, ONCE, Command, TaskSpec

VALUE_VERSION = 1
# A command that names its shell is version 2 (see store.codec): an older taskgui then
# refuses the file instead of running the command with /bin/sh.
COMMAND_SHELL_VERSION = 2
E = TypeVar("E", bound=StrEnum)
_MISSING: Any = object()
# What a constructor may raise for a value it cannot take.
_REFUSALS = (InvalidTaskError, ValueError, TypeError, OverflowError)

_TASK_KEYS = (
    "id",
    "name",
    "state",
    "command",
    "first_run_at",
    "schedule",
    "retry",
    "priority",
    "timeout_seconds",
    "concurrency_key",
    "overlap",
    "misfire",
    "misfire_grace_seconds",
    "paused",
    "notify",
)
_COMMAND_KEYS = ("v", "line", "shell", "cwd", "env", "shell_path")
_RETRY_KEYS = ("v", "backoff", "max_attempts", "base", "max", "factor", "jitter")
_SCHEDULE_KEYS = {
    "once": ("v", "kind"),
    "every": ("v", "kind", "seconds", "mode"),
    "cron": ("v", "kind", "expr", "tz"),
}


class FieldError(Exception):
    """``path`` (e.g. 'retry.max_attempts'; empty for the task itself) is not valid."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}" if path else message)
        self.path = path
        self.message = message


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _shown(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:59] + "…"


class _Fields:
    """Typed access to one JSON object's keys, with errors that name the key."""

    def __init__(self, value: object, path: str, known: Sequence[str]) -> None:
        if not isinstance(value, dict):
            raise FieldError(path, f"expected a JSON object, got {_shown(value)}")
        self.data: dict[str, Any] = value
        self.path = path
        unknown = sorted(key for key in value if key not in known)
        if unknown:
            raise FieldError(
                _join(path, unknown[0]), f"unknown field; expected one of {', '.join(known)}"
            )

    def at(self, key: str) -> str:
        return _join(self.path, key)

    def get(self, key: str, default: Any) -> Any:
        if key in self.data:
            return self.data[key]
        if default is _MISSING:
            raise FieldError(self.at(key), "this field is required")
        return default

    def check_version(self, newest: int = VALUE_VERSION) -> None:
        version = self.data.get("v", VALUE_VERSION)  # a hand-written file may leave it out
        if type(version) is not int:
            raise FieldError(self.at("v"), f"expected a whole number, got {_shown(version)}")
        if version > newest:
            readable = (
                str(VALUE_VERSION) if newest == VALUE_VERSION else f"{VALUE_VERSION}-{newest}"
            )
            raise FieldError(
                self.at("v"),
                f"written by a newer taskgui (version {version}); this taskgui reads "
                f"version {readable}",
            )
        if version < VALUE_VERSION:
            raise FieldError(self.at("v"), f"unknown version {version}")

    def text(self, key: str, default: Any = _MISSING, *, nullable: bool = False) -> Any:
        value = self.get(key, default)
        if isinstance(value, str) or (nullable and value is None) or value is default:
            return value
        kind = "text or null" if nullable else "text"
        raise FieldError(self.at(key), f"expected {kind}, got {_shown(value)}")

    def integer(self, key: str, default: Any = _MISSING) -> Any:
        value = self.get(key, default)
        if type(value) is int or value is default:
            return value
        raise FieldError(self.at(key), f"expected a whole number, got {_shown(value)}")

    def number(self, key: str, default: Any = _MISSING) -> Any:
        value = self.get(key, default)
        if value is default:
            return value
        if type(value) in (int, float):
            return float(value)
        raise FieldError(self.at(key), f"expected a number, got {_shown(value)}")

    def boolean(self, key: str, default: Any = _MISSING) -> Any:
        value = self.get(key, default)
        if type(value) is bool or value is default:
            return value
        raise FieldError(self.at(key), f"expected true or false, got {_shown(value)}")

    def seconds(self, key: str, default: Any = _MISSING, *, nullable: bool = False) -> Any:
        value = self.get(key, default)
        if value is default or (nullable and value is None):
            return value
        if type(value) not in (int, float):
            kind = "a number of seconds or null" if nullable else "a number of seconds"
            raise FieldError(self.at(key), f"expected {kind}, got {_shown(value)}")
        try:
            return timedelta(seconds=value)
        except (OverflowError, ValueError):
            raise FieldError(self.at(key), f"{_shown(value)} seconds is out of range") from None

    def choice(self, key: str, enum: type[E], default: Any = _MISSING) -> Any:
        value = self.get(key, default)
        if value is default:
            return value
        try:
            return enum(value)
        except ValueError:
            choices = ", ".join(member.value for member in enum)
            raise FieldError(
                self.at(key), f"expected one of {choices}, got {_shown(value)}"
            ) from None

    def moment(self, key: str) -> datetime:
        value = self.text(key)
        try:
            moment = datetime.fromisoformat(value)
        except ValueError:
            moment = None
        if moment is None or moment.utcoffset() is None:
            raise FieldError(
                self.at(key),
                f"expected an ISO 8601 time with an offset, like "
                f"2026-03-01T09:30:00+01:00, got {_shown(value)}",
            )
        return moment


T = TypeVar("T")


def _build(
    path: str, build: Callable[[], T], probes: Sequence[tuple[str, Callable[[], object]]]
) -> T:
    """``build()``, or a FieldError on the first probed key that fails on its own."""
    try:
        return build()
    except _REFUSALS as error:
        for key, probe in probes:
            try:
                probe()
            except _REFUSALS as alone:
                raise FieldError(_join(path, key), str(alone)) from None
        raise FieldError(path, str(error)) from None


class TaskDecoder:
    """Turns the task objects of one file into TaskSpecs.

    Tasks share a handful of schedules and retry policies, and checking a cron
    expression costs a fraction of a millisecond, so decoded values are kept by
    their canonical JSON text for the length of one file.
    """

    def __init__(self) -> None:
        self._schedules: dict[str, Recurrence] = {}
        self._retries: dict[str, RetryPolicy] = {}

    def task(self, item: object) -> tuple[TaskSpec, TaskState | None]:
        """The task's definition and the state it was exported in (None if not given)."""
        fields = _Fields(item, "", _TASK_KEYS)
        task_id = fields.get("id", None)
        if task_id is not None and (type(task_id) is not int or task_id < 0):
            raise FieldError("id", f"expected a whole number from 0, got {_shown(task_id)}")
        state = fields.choice("state", TaskState, None)
        name = fields.text("name")
        _check_savable(name, "name")
        command = self.command(fields.get("command", _MISSING))
        first = fields.moment("first_run_at")
        recurrence = self._memo(self._schedules, fields.get("schedule", None), self.schedule)
        retry = self._memo(self._retries, fields.get("retry", None), self.retry)
        priority = fields.integer("priority", 0)
        timeout = fields.seconds("timeout_seconds", None, nullable=True)
        key = fields.text("concurrency_key", None, nullable=True)
        _check_savable(key, "concurrency_key")
        overlap = fields.choice("overlap", OverlapPolicy, OverlapPolicy.SKIP)
        misfire = fields.choice("misfire", MisfirePolicy, MisfirePolicy.RUN_ONCE)
        grace = fields.seconds("misfire_grace_seconds", DEFAULT_MISFIRE_GRACE)
        paused = fields.boolean("paused", False)
        notify_text = fields.text("notify", None, nullable=True)
        try:
            notify = None if notify_text is None else parse_rule(notify_text)
        except InvalidTaskError as error:
            raise FieldError("notify", str(error)) from None

        def alone(**values: Any) -> TaskSpec:
            return TaskSpec(name="probe", command=command, first_run_at=first, **values)

        spec = _build(
            "",
            lambda: TaskSpec(
                name=name,
                command=command,
                first_run_at=first,
                recurrence=recurrence,
                retry=retry,
                priority=priority,
                timeout=timeout,
                concurrency_key=key,
                overlap=overlap,
                misfire=misfire,
                misfire_grace=grace,
                paused=paused,
                notify=notify,
            ),
            [
                ("name", lambda: TaskSpec(name=name, command=command, first_run_at=first)),
                ("priority", lambda: alone(priority=priority)),
                ("timeout_seconds", lambda: alone(timeout=timeout)),
                ("concurrency_key", lambda: alone(concurrency_key=key)),
                ("misfire_grace_seconds", lambda: alone(misfire_grace=grace)),
            ],
        )
        return spec, state

    @staticmethod
    def _memo(cache: dict[str, T], value: object, decode: Callable[[object], T]) -> T:
        if value is None:
            return decode(None)
        try:
            key = json.dumps(value, sort_keys=True)
        except (TypeError, ValueError):
            return decode(value)
        if key not in cache:
            cache[key] = decode(value)
        return cache[key]

    @staticmethod
    def command(value: object) -> Command:
        fields = _Fields(value, "command", _COMMAND_KEYS)
        fields.check_version(COMMAND_SHELL_VERSION)
        line = fields.text("line")
        shell = fields.boolean("shell", True)
        cwd = fields.text("cwd", None, nullable=True)
        env = _env_pairs(fields.get("env", []), fields.at("env"))
        path = fields.text("shell_path", None, nullable=True)
        return _build(
            "command",
            lambda: Command(line=line, use_shell=shell, cwd=cwd, env=env, shell_path=path),
            [
                ("line", lambda: Command(line=line)),
                ("env", lambda: Command(line="x", env=env)),
                ("shell_path", lambda: Command(line="x", use_shell=shell, shell_path=path)),
            ],
        )

    @staticmethod
    def schedule(value: object) -> Recurrence:
        if value is None:
            return ONCE
        path = "schedule"
        kind = _Fields(value, path, ("v", "kind", "seconds", "mode", "expr", "tz")).text("kind")
        if kind not in _SCHEDULE_KEYS:
            raise FieldError(
                _join(path, "kind"), f"expected one of once, every, cron, got {_shown(kind)}"
            )
        fields = _Fields(value, path, _SCHEDULE_KEYS[kind])
        fields.check_version()
        if kind == "once":
            return Once()
        if kind == "every":
            interval = fields.seconds("seconds")
            mode = fields.choice("mode", EveryMode, EveryMode.FIXED_RATE)
            return _build(
                path, lambda: Every(interval, mode), [("seconds", lambda: Every(interval))]
            )
        expr = fields.text("expr")
        tz = fields.text("tz", "UTC")
        return _build(
            path,
            lambda: Cron(expr, tz),
            [("expr", lambda: Cron(expr, "UTC")), ("tz", lambda: load_zone(tz))],
        )

    @staticmethod
    def retry(value: object) -> RetryPolicy:
        if value is None:
            return DEFAULT_RETRY
        path = "retry"
        fields = _Fields(value, path, _RETRY_KEYS)
        fields.check_version()
        backoff = fields.choice("backoff", Backoff, Backoff.EXPONENTIAL)
        attempts = fields.integer("max_attempts", 3)
        base = fields.seconds("base", DEFAULT_BASE_DELAY)
        cap = fields.seconds("max", max(DEFAULT_MAX_DELAY, base))
        factor = fields.number("factor", 2.0)
        jitter = fields.boolean("jitter", False)
        return _build(
            path,
            lambda: RetryPolicy(
                backoff=backoff,
                max_attempts=attempts,
                base_delay=base,
                max_delay=cap,
                factor=factor,
                jitter=jitter,
            ),
            [
                ("max_attempts", lambda: RetryPolicy(max_attempts=attempts)),
                ("base", lambda: RetryPolicy(base_delay=base, max_delay=max(base, cap))),
                ("factor", lambda: RetryPolicy(factor=factor)),
            ],
        )


def _check_savable(value: str | None, path: str) -> None:
    """Refuse text the database cannot store as a column (a lone surrogate, which JSON
    can spell as an escape); command lines and environments are stored as JSON, which
    escapes it, and need no such check."""
    if value is None or value.isascii():
        return
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise FieldError(
            path, "holds a character that cannot be saved (a lone surrogate)"
        ) from None


def _env_pairs(value: object, path: str) -> tuple[tuple[str, str], ...]:
    """``[["NAME", "value"], ...]`` as the store writes it, or ``{"NAME": "value"}``."""
    if isinstance(value, dict):
        value = list(value.items())
    if not isinstance(value, list):
        raise FieldError(path, f"expected a list of [name, value] pairs, got {_shown(value)}")
    pairs: list[tuple[str, str]] = []
    for index, pair in enumerate(value):
        if (
            not isinstance(pair, list | tuple)
            or len(pair) != 2
            or not all(isinstance(part, str) for part in pair)
        ):
            raise FieldError(
                f"{path}[{index}]", f"expected a [name, value] pair of text, got {_shown(pair)}"
            )
        pairs.append((pair[0], pair[1]))
    return tuple(pairs)
