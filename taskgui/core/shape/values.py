"""The versioned JSON objects for a command, a schedule and a retry policy.

Each has one writer (``*_json``, a plain JSON value) and one reader (``decode_*``,
strict, blaming the field at fault). The store keeps them as compact text in their
columns (``*_text``: exactly ``json.dumps(*_json(x), separators=(",", ":"))``), the
export file and a request carry them as nested objects, and the CLI's JSON shows them
under ``definition``: one shape everywhere.

    command   {"v": 1, "line": "backup.sh", "shell": true, "cwd": null, "env": [["K", "v"]]}
              {"v": 2, ..., "shell_path": "/bin/bash"}   (a crontab's SHELL=; see below)
    schedule  {"v": 1, "kind": "once"}
              {"v": 1, "kind": "every", "seconds": 300.0, "mode": "fixed_rate"}
              {"v": 1, "kind": "cron", "expr": "0 3 * * *", "tz": "Europe/Berlin"}
    retry     {"v": 1, "backoff": "exponential", "max_attempts": 3, "base": 10.0,
               "max": 3600.0, "factor": 2.0, "jitter": false}

A command that names its shell is written as version 2, so a taskgui from before sets
the task aside instead of running it with /bin/sh; every other value stays version 1,
readable by any taskgui. Keys left out take their defaults (older rows and
hand-written files leave optional ones out); unknown keys are refused, because a
newer taskgui that adds one also raises the version.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import lru_cache
from json.encoder import encode_basestring_ascii
from typing import Any, TypeVar

from taskgui.core.recurrence import Cron, Every, EveryMode, Once, Recurrence, load_zone, stored_cron
from taskgui.core.retry import DEFAULT_BASE_DELAY, DEFAULT_MAX_DELAY, Backoff, RetryPolicy
from taskgui.core.shape.fields import (
    SHAPE_VERSION,
    FieldError,
    Fields,
    build,
    env_pairs,
    join,
    shown,
)
from taskgui.core.task import Command

COMMAND_SHELL_VERSION = 2
COMMAND_KEYS = ("v", "line", "shell", "cwd", "env", "shell_path")
RETRY_KEYS = ("v", "backoff", "max_attempts", "base", "max", "factor", "jitter")
SCHEDULE_KEYS = {
    "once": ("v", "kind"),
    "every": ("v", "kind", "seconds", "mode"),
    "cron": ("v", "kind", "expr", "tz"),
}
_ANY_SCHEDULE_KEY = ("v", "kind", "seconds", "mode", "expr", "tz")

# ------------------------------------------------------------------------ writing


def command_json(command: Command) -> dict[str, Any]:
    value: dict[str, Any] = {
        "v": SHAPE_VERSION,
        "line": command.line,
        "shell": command.use_shell,
        "cwd": command.cwd,
        "env": [[name, value] for name, value in command.env],
    }
    if command.shell_path is not None:
        value.update(v=COMMAND_SHELL_VERSION, shell_path=command.shell_path)
    return value


def schedule_json(recurrence: Recurrence) -> dict[str, Any]:
    if isinstance(recurrence, Every):
        return {
            "v": SHAPE_VERSION,
            "kind": "every",
            "seconds": recurrence.interval.total_seconds(),
            "mode": recurrence.mode.value,
        }
    if isinstance(recurrence, Cron):
        return {"v": SHAPE_VERSION, "kind": "cron", "expr": recurrence.expr, "tz": recurrence.tz}
    return {"v": SHAPE_VERSION, "kind": "once"}


def retry_json(policy: RetryPolicy) -> dict[str, Any]:
    return {
        "v": SHAPE_VERSION,
        "backoff": policy.backoff.value,
        "max_attempts": policy.max_attempts,
        "base": policy.base_delay.total_seconds(),
        "max": policy.max_delay.total_seconds(),
        "factor": policy.factor,
        "jitter": policy.jitter,
    }


# Shared encoders: ``json.dumps`` with non-default arguments builds a new JSONEncoder on
# every call. ``_string`` turns a str into its JSON literal, exactly as json.dumps.
compact_json = json.JSONEncoder(separators=(",", ":")).encode
# What ``JSONEncoder().encode`` returns for a str (ensure_ascii), without its frame.
_string = encode_basestring_ascii
_PLAIN_HEAD = f'{{"v":{SHAPE_VERSION},"line":'
_PLAIN_TAIL = ',"shell":true,"cwd":null,"env":[]}'


def command_text(command: Command) -> str:
    """``compact_json(command_json(command))``, written out by hand.

    Every add and every status change of the store encodes its command, and lines are
    usually unique (memoising would not help); building the text directly is several
    times faster than dumping a dict, and the text is identical
    (``tests/core/shape`` holds the two to each other).
    """
    string = _string
    path = command.shell_path
    if not command.env and command.cwd is None and command.use_shell and path is None:
        return _PLAIN_HEAD + string(command.line) + _PLAIN_TAIL  # the usual one
    env = ",".join(f"[{string(name)},{string(value)}]" for name, value in command.env)
    cwd = "null" if command.cwd is None else string(command.cwd)
    shell = "true" if command.use_shell else "false"
    version, shell_path = (
        (SHAPE_VERSION, "")
        if path is None
        else (COMMAND_SHELL_VERSION, f',"shell_path":{string(path)}')
    )
    return (
        f'{{"v":{version},"line":{string(command.line)},"shell":{shell},'
        f'"cwd":{cwd},"env":[{env}]{shell_path}}}'
    )


def _schedule_text(recurrence: Recurrence) -> str:
    return compact_json(schedule_json(recurrence))


def _retry_text(policy: RetryPolicy) -> str:
    return compact_json(retry_json(policy))


_T = TypeVar("_T")


def _memoised(encode: Callable[[_T], str], size: int = 256) -> Callable[[_T], str]:
    """``encode`` remembered by the object first, then by value.

    Most tasks share a handful of schedules and policies, and an import or a store
    shares one object per distinct one (their decoders memoise): found by ``id``, a
    dict lookup, where ``lru_cache`` alone calls the dataclass's ``__hash__`` and, on
    a hit, its ``__eq__``, both Python. An equal object found first by value is
    encoded once too. The table holds each object, so its id cannot be reused while
    it is there.
    """
    by_value = lru_cache(maxsize=size)(encode)
    seen: dict[int, tuple[_T, str]] = {}

    def text(value: _T) -> str:
        found = seen.get(id(value))
        if found is not None and found[0] is value:
            return found[1]
        result = by_value(value)
        if len(seen) >= size:
            seen.clear()
        seen[id(value)] = (value, result)
        return result

    return text


schedule_text = _memoised(_schedule_text)
retry_text = _memoised(_retry_text)


# ------------------------------------------------------------------------ reading


def decode_command(value: object, path: str = "command") -> Command:
    fields = Fields(value, path, COMMAND_KEYS)
    fields.check_version(COMMAND_SHELL_VERSION)
    line = fields.text("line")
    shell = fields.boolean("shell", True)
    cwd = fields.text("cwd", None, nullable=True)
    env = env_pairs(fields.get("env", []), fields.at("env"))
    shell_path = fields.text("shell_path", None, nullable=True)
    return build(
        path,
        lambda: Command(line=line, use_shell=shell, cwd=cwd, env=env, shell_path=shell_path),
        lambda: [
            ("line", lambda: Command(line=line)),
            ("env", lambda: Command(line="x", env=env)),
            ("shell_path", lambda: Command(line="x", use_shell=shell, shell_path=shell_path)),
        ],
    )


def decode_schedule(value: object, path: str = "schedule", *, stored: bool = False) -> Recurrence:
    """``stored``: the value was saved by a taskgui, so a cron expression that this one
    refuses (an older one accepted it) is kept as a ``RefusedCron`` and its task loads
    paused, instead of being refused (what a file a person wrote gets)."""
    kind = Fields(value, path, _ANY_SCHEDULE_KEY).text("kind")
    if kind not in SCHEDULE_KEYS:
        raise FieldError(
            join(path, "kind"),
            f"unknown schedule kind {shown(kind)}; expected one of once, every, cron",
        )
    fields = Fields(value, path, SCHEDULE_KEYS[kind])
    fields.check_version()
    if kind == "once":
        return Once()
    if kind == "every":
        interval = fields.seconds("seconds")
        mode = fields.choice("mode", EveryMode, EveryMode.FIXED_RATE)
        return build(
            path, lambda: Every(interval, mode), lambda: [("seconds", lambda: Every(interval))]
        )
    expr = fields.text("expr")
    tz = fields.text("tz", "UTC")
    if stored:
        return build(path, lambda: stored_cron(expr, tz), lambda: [("tz", lambda: load_zone(tz))])
    return build(
        path,
        lambda: Cron(expr, tz),
        lambda: [("expr", lambda: Cron(expr, "UTC")), ("tz", lambda: load_zone(tz))],
    )


def decode_retry(value: object, path: str = "retry") -> RetryPolicy:
    fields = Fields(value, path, RETRY_KEYS)
    fields.check_version()
    backoff = fields.choice("backoff", Backoff, Backoff.EXPONENTIAL)
    attempts = fields.integer("max_attempts", 3)
    base = fields.seconds("base", DEFAULT_BASE_DELAY)
    cap = fields.seconds("max", max(DEFAULT_MAX_DELAY, base))
    factor = fields.number("factor", 2.0)
    jitter = fields.boolean("jitter", False)
    return build(
        path,
        lambda: RetryPolicy(
            backoff=backoff,
            max_attempts=attempts,
            base_delay=base,
            max_delay=cap,
            factor=factor,
            jitter=jitter,
        ),
        lambda: [
            ("max_attempts", lambda: RetryPolicy(max_attempts=attempts)),
            ("base", lambda: RetryPolicy(base_delay=base, max_delay=max(base, cap))),
            ("factor", lambda: RetryPolicy(factor=factor)),
        ],
    )
