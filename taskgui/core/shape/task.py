"""The versioned JSON object for a task's definition and for one run of its history.

    task  {"id": 7, "name": "backup", "state": "pending", "command": {...},
           "first_run_at": "2026-03-01T08:30:00+00:00", "schedule": {...},
           "retry": {...}, "priority": 0, "timeout_seconds": null,
           "concurrency_key": null, "overlap": "skip", "misfire": "run_once",
           "misfire_grace_seconds": 60.0, "paused": false, "notify": "after:3"}
          (+ "spread", "conditions", "paused_until", "on_wake", "after", "on_node"
          and "on_tag" when set: ``shape.rules``)
    run   {"id": 3, "task_id": 7, "attempt": 1, "kind": "occurrence",
           "scheduled_at": ..., "started_at": ..., "finished_at": ..., "outcome":
           "succeeded", "exit_code": 0, "error": null, "output": "...", "pid": 4242,
           "missed": 0}

``command``, ``schedule`` and ``retry`` are the objects of ``shape.values``. Times are
ISO 8601 with an offset (written in UTC with every microsecond, so a round trip is
exact; the CLI writes milliseconds, and any offset reads back), durations are seconds.
``state`` is information, not definition: an import uses it only to leave finished
tasks out, and a definition alone (a request's) has none. Only ``name``, ``command``
and ``first_run_at`` are required; every other key takes its default. ``notify`` (a
``core.notify_rules`` rule) is written only for a task that has its own.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Any, TypeVar

from taskgui.core.errors import InvalidTaskError
from taskgui.core.notify_rules import parse_rule
from taskgui.core.recurrence import Recurrence
from taskgui.core.retry import RetryPolicy
from taskgui.core.shape.fields import MISSING, FieldError, Fields, build, check_savable, shown
from taskgui.core.shape.rules import (
    after_json,
    conditions_json,
    decode_after,
    decode_conditions,
    decode_on_wake,
    decode_paused_until,
    decode_spread,
    spread_json,
)
from taskgui.core.shape.values import (
    command_json,
    decode_command,
    decode_retry,
    decode_schedule,
    retry_json,
    schedule_json,
)
from taskgui.core.states import MisfirePolicy, OverlapPolicy, RunOutcome, SlotKind, TaskState
from taskgui.core.status import RunRecord
from taskgui.core.task import DEFAULT_MISFIRE_GRACE, DEFAULT_RETRY, ONCE, TaskSpec

T = TypeVar("T")
TASK_KEYS = (
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
    "spread",
    "conditions",
    "paused_until",
    "on_wake",
    "after",
    "on_node",
    "on_tag",
)
RUN_KEYS = (
    "id",
    "task_id",
    "attempt",
    "kind",
    "scheduled_at",
    "started_at",
    "finished_at",
    "outcome",
    "exit_code",
    "error",
    "output",
    "pid",
    "missed",
)
Iso = Callable[[datetime], str]


def iso(moment: datetime) -> str:
    """ISO 8601 in UTC with every microsecond, so a round trip is exact."""
    return moment.astimezone(UTC).isoformat()


def _seconds(value: timedelta | None) -> float | None:
    return None if value is None else value.total_seconds()


def task_json(
    spec: TaskSpec, state: TaskState | None = None, *, moment: Iso = iso
) -> dict[str, Any]:
    """A task's definition, with the state it is in when one is given."""
    value: dict[str, Any] = {"id": spec.id, "name": spec.name}
    if state is not None:
        value["state"] = state.value
    value.update(
        command=command_json(spec.command),
        first_run_at=moment(spec.first_run_at),
        schedule=schedule_json(spec.recurrence),
        retry=retry_json(spec.retry),
        priority=spec.priority,
        timeout_seconds=_seconds(spec.timeout),
        concurrency_key=spec.concurrency_key,
        overlap=spec.overlap.value,
        misfire=spec.misfire.value,
        misfire_grace_seconds=spec.misfire_grace.total_seconds(),
        paused=spec.paused,
    )
    if spec.notify is not None:
        # Only when the task has a rule of its own: a file of tasks that follow the
        # default still reads in a taskgui from before per-task rules.
        value["notify"] = spec.notify.text
    # Written only when set: a task without them is the object it was before they
    # existed (older files and scripts see no new keys), and reads back the same.
    spread = spread_json(spec.spread)
    if spread is not None:
        value["spread"] = spread
    conditions = conditions_json(spec.conditions)
    if conditions is not None:
        value["conditions"] = conditions
    if spec.paused_until is not None:
        value["paused_until"] = moment(spec.paused_until)
    if spec.on_wake is not None:
        value["on_wake"] = spec.on_wake.text
    after = after_json(spec)
    if after is not None:
        value["after"] = after  # upstream ids as stored; an import remaps them
    if spec.on_node is not None:
        value["on_node"] = spec.on_node
    if spec.on_tag is not None:
        value["on_tag"] = spec.on_tag
    return value


def run_json(run: RunRecord, *, moment: Iso = iso) -> dict[str, Any]:
    def opt(value: datetime | None) -> str | None:
        return None if value is None else moment(value)

    return {
        "id": run.id,
        "task_id": run.task_id,
        "attempt": run.attempt,
        "kind": run.kind.value,
        "scheduled_at": moment(run.scheduled_at),
        "started_at": opt(run.started_at),
        "finished_at": opt(run.finished_at),
        "outcome": None if run.outcome is None else run.outcome.value,
        "exit_code": run.exit_code,
        "error": run.error,
        "output": run.output,
        "pid": run.pid,
        "missed": run.missed,
    }


def decode_run(value: object, path: str = "") -> RunRecord:
    """A run as ``run_json`` writes it (what an export's history and ``history --json``
    hold); FieldError naming the field at fault."""
    fields = Fields(value, path, RUN_KEYS)
    return RunRecord(
        id=fields.integer("id"),
        task_id=fields.integer("task_id"),
        attempt=fields.integer("attempt"),
        kind=fields.choice("kind", SlotKind),
        scheduled_at=fields.moment("scheduled_at").astimezone(UTC),
        started_at=_utc(fields.moment("started_at", None, nullable=True)),
        finished_at=_utc(fields.moment("finished_at", None, nullable=True)),
        outcome=fields.choice("outcome", RunOutcome, None),
        exit_code=fields.integer("exit_code", None, nullable=True),
        error=fields.text("error", None, nullable=True),
        output=fields.text("output", ""),
        pid=fields.integer("pid", None, nullable=True),
        missed=fields.integer("missed", 0),
    )


def _utc(moment: datetime | None) -> datetime | None:
    return None if moment is None else moment.astimezone(UTC)


class TaskDecoder:
    """Turns task objects into TaskSpecs.

    Tasks share a handful of schedules and retry policies, and checking a cron
    expression costs a fraction of a millisecond, so decoded values are kept by their
    canonical JSON text for the life of the decoder (one file, one request).
    ``stored`` is ``decode_schedule``'s: for definitions a taskgui wrote and sent.
    ``memoise=False`` for a decoder used once (a request): its keys would cost more
    than they could save.
    """

    def __init__(self, *, stored: bool = False, memoise: bool = True) -> None:
        self._stored = stored
        self._memoise = memoise
        self._schedules: dict[str, Recurrence] = {}
        self._retries: dict[str, RetryPolicy] = {}

    def task(self, item: object, *, keep_id: bool = True) -> tuple[TaskSpec, TaskState | None]:
        """The task's definition and the state it was in (None if not given).

        Without ``keep_id`` the definition has id 0, as a new task does.
        """
        fields = Fields(item, "", TASK_KEYS)
        task_id = fields.get("id", None)
        if task_id is not None and (type(task_id) is not int or task_id < 0):
            raise FieldError("id", f"expected a whole number from 0, got {shown(task_id)}")
        state = fields.choice("state", TaskState, None)
        name = fields.text("name")
        check_savable(name, "name")
        command = decode_command(fields.get("command", MISSING))
        first = fields.moment("first_run_at")
        schedule_value, retry_value = fields.get("schedule", None), fields.get("retry", None)
        if self._memoise:
            recurrence = self._memo(self._schedules, schedule_value, self._schedule)
            retry = self._memo(self._retries, retry_value, self._retry)
        else:
            recurrence, retry = self._schedule(schedule_value), self._retry(retry_value)
        priority = fields.integer("priority", 0)
        timeout = fields.seconds("timeout_seconds", None, nullable=True)
        key = fields.text("concurrency_key", None, nullable=True)
        check_savable(key, "concurrency_key")
        overlap = fields.choice("overlap", OverlapPolicy, OverlapPolicy.SKIP)
        misfire = fields.choice("misfire", MisfirePolicy, MisfirePolicy.RUN_ONCE)
        grace = fields.seconds("misfire_grace_seconds", DEFAULT_MISFIRE_GRACE)
        paused = fields.boolean("paused", False)
        notify_text = fields.text("notify", None, nullable=True)
        try:
            notify = None if notify_text is None else parse_rule(notify_text)
        except InvalidTaskError as error:
            raise FieldError("notify", str(error)) from None
        spread = decode_spread(fields.get("spread", None))
        conditions = decode_conditions(fields.get("conditions", None))
        paused_until = decode_paused_until(fields)
        on_wake = decode_on_wake(fields)
        after, only_after = decode_after(fields.get("after", None))
        on_node = fields.text("on_node", None, nullable=True)
        on_tag = fields.text("on_tag", None, nullable=True)
        spec_id = task_id if keep_id and task_id is not None else 0

        def alone(**values: Any) -> TaskSpec:
            return TaskSpec(name="probe", command=command, first_run_at=first, **values)

        spec = build(
            "",
            lambda: TaskSpec(
                id=spec_id,
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
                spread=spread,
                conditions=conditions,
                paused_until=paused_until,
                on_wake=on_wake,
                after=after,
                only_after=only_after,
                on_node=on_node,
                on_tag=on_tag,
            ),
            lambda: [
                ("name", lambda: TaskSpec(name=name, command=command, first_run_at=first)),
                ("priority", lambda: alone(priority=priority)),
                ("timeout_seconds", lambda: alone(timeout=timeout)),
                ("concurrency_key", lambda: alone(concurrency_key=key)),
                ("misfire_grace_seconds", lambda: alone(misfire_grace=grace)),
                ("on_node", lambda: alone(on_node=on_node)),
                ("on_tag", lambda: alone(on_tag=on_tag)),
            ],
        )
        return spec, state

    def _schedule(self, value: object) -> Recurrence:
        return ONCE if value is None else decode_schedule(value, stored=self._stored)

    @staticmethod
    def _retry(value: object) -> RetryPolicy:
        return DEFAULT_RETRY if value is None else decode_retry(value)

    @staticmethod
    def _memo(cache: dict[str, T], value: object, decode: Callable[[object], T]) -> T:
        if value is None:
            return decode(None)
        try:
            key = json.dumps(value, sort_keys=True)
        except (TypeError, ValueError, RecursionError):
            return decode(value)
        if key not in cache:
            cache[key] = decode(value)
        return cache[key]
