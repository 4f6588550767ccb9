"""The versioned JSON objects for when a run may start: its spread and its conditions.

    spread      {"v": 1, "seconds": 600.0, "fixed": false}
    conditions  {"v": 1, "ac_power": true, "network": false, "unmetered": false,
                 "idle_seconds": null, "stop_when_unmet": false,
                 "give_up_after_seconds": null}
    paused_until "2026-12-01T15:00:00+00:00"   (a pause for a while: when it ends)
    after       {"v": 1, "tasks": [{"id": 3, "on": "succeeded"}], "only": false}
                 (run after other tasks; "only": no schedule of its own)
    on_wake      "spread:10m"   (its wake-up policy, core/wake.py; absent: the global one)
    on_node     "backup-box"   (a shared schedule: run only on this node)
    on_tag      "disk"         (a shared schedule: run only on a node with this tag)

A task without them has ``null`` for both (and the store no text at all), so every
task written before they existed reads the same. In the store both sit in one
``rules`` column (``rules_text``), and a task object carries them as two keys.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from taskgui.core.conditions import NO_CONDITIONS, RunConditions
from taskgui.core.dependencies import MAX_UPSTREAMS, After, Upstream
from taskgui.core.errors import InvalidTaskError
from taskgui.core.shape.fields import SHAPE_VERSION, FieldError, Fields, build
from taskgui.core.spread import Spread
from taskgui.core.task import TaskSpec
from taskgui.core.wake import WakePolicy, parse_wake_policy

SPREAD_KEYS = ("v", "seconds", "fixed")
CONDITION_KEYS = (
    "v",
    "ac_power",
    "network",
    "unmetered",
    "idle_seconds",
    "stop_when_unmet",
    "give_up_after_seconds",
)
RULES_KEYS = ("v", "spread", "conditions", "paused_until", "on_wake", "after", "on_node", "on_tag")
AFTER_KEYS = ("v", "tasks", "only")
EDGE_KEYS = ("id", "on")


def spread_json(spread: Spread | None) -> dict[str, Any] | None:
    if spread is None:
        return None
    return {"v": SHAPE_VERSION, "seconds": spread.width.total_seconds(), "fixed": spread.fixed}


def conditions_json(conditions: RunConditions) -> dict[str, Any] | None:
    if not conditions and conditions == NO_CONDITIONS:
        return None

    def seconds(value: Any) -> float | None:
        return None if value is None else value.total_seconds()

    return {
        "v": SHAPE_VERSION,
        "ac_power": conditions.ac_power,
        "network": conditions.network,
        "unmetered": conditions.unmetered,
        "idle_seconds": seconds(conditions.idle_for),
        "stop_when_unmet": conditions.stop_when_unmet,
        "give_up_after_seconds": seconds(conditions.give_up_after),
    }


def after_json(spec: TaskSpec) -> dict[str, Any] | None:
    if not spec.after:
        return None
    return {
        "v": SHAPE_VERSION,
        "tasks": [{"id": edge.task_id, "on": edge.after.value} for edge in spec.after],
        "only": spec.only_after,
    }


After_ = tuple[tuple[Upstream, ...], bool]


def decode_after(value: object, path: str = "after") -> After_:
    """The "run after" object back: its edges and whether it has no schedule of its own."""
    if value is None:
        return (), False
    fields = Fields(value, path, AFTER_KEYS)
    fields.check_version()
    tasks = fields.get("tasks", [])
    if not isinstance(tasks, list):
        raise FieldError(f"{path}.tasks", "expected a list of tasks")
    if len(tasks) > MAX_UPSTREAMS:
        raise FieldError(f"{path}.tasks", f"at most {MAX_UPSTREAMS} tasks")
    edges = []
    for index, item in enumerate(tasks):
        edge = Fields(item, f"{path}.tasks[{index}]", EDGE_KEYS)
        task_id = edge.integer("id")
        if task_id <= 0:
            raise FieldError(edge.at("id"), f"names no task: {task_id}")
        edges.append(Upstream(task_id, edge.choice("on", After, After.SUCCEEDED)))
    return tuple(edges), fields.boolean("only", False)


def decode_spread(value: object, path: str = "spread") -> Spread | None:
    if value is None:
        return None
    fields = Fields(value, path, SPREAD_KEYS)
    fields.check_version()
    width = fields.seconds("seconds")
    fixed = fields.boolean("fixed", False)
    return build(path, lambda: Spread(width, fixed=fixed), lambda: [])


def decode_conditions(value: object, path: str = "conditions") -> RunConditions:
    if value is None:
        return NO_CONDITIONS
    fields = Fields(value, path, CONDITION_KEYS)
    fields.check_version()
    ac_power = fields.boolean("ac_power", False)
    network = fields.boolean("network", False)
    unmetered = fields.boolean("unmetered", False)
    idle = fields.seconds("idle_seconds", None, nullable=True)
    stop = fields.boolean("stop_when_unmet", False)
    give_up = fields.seconds("give_up_after_seconds", None, nullable=True)
    return build(
        path,
        lambda: RunConditions(
            ac_power=ac_power,
            network=network,
            unmetered=unmetered,
            idle_for=idle,
            stop_when_unmet=stop,
            give_up_after=give_up,
        ),
        lambda: [
            ("idle_seconds", lambda: RunConditions(idle_for=idle)),
            ("give_up_after_seconds", lambda: RunConditions(give_up_after=give_up)),
        ],
    )


def rules_text(spec: TaskSpec) -> str | None:
    """The store's ``rules`` column: compact JSON, or NULL when the task has none."""
    spread = spread_json(spec.spread)
    conditions = conditions_json(spec.conditions)
    until = paused_until_json(spec.paused_until)
    on_wake = None if spec.on_wake is None else spec.on_wake.text
    after = after_json(spec)
    pinned = spec.on_node is not None or spec.on_tag is not None
    if (
        spread is None
        and conditions is None
        and until is None
        and on_wake is None
        and after is None
        and not pinned
    ):
        return None
    value: dict[str, Any] = {"v": SHAPE_VERSION, "spread": spread, "conditions": conditions}
    if until is not None:
        value["paused_until"] = until
    if on_wake is not None:
        value["on_wake"] = on_wake
    if after is not None:
        value["after"] = after
    # Where it may run on a shared schedule.
    if spec.on_node is not None:
        value["on_node"] = spec.on_node
    if spec.on_tag is not None:
        value["on_tag"] = spec.on_tag
    return json.dumps(value, separators=(",", ":"))


def paused_until_json(until: datetime | None) -> str | None:
    return None if until is None else until.astimezone(UTC).isoformat()


def decode_paused_until(fields: Fields) -> datetime | None:
    until = fields.moment("paused_until", None, nullable=True)
    return None if until is None else until.astimezone(UTC)


def decode_on_wake(fields: Fields, key: str = "on_wake") -> WakePolicy | None:
    text = fields.text(key, None, nullable=True)
    if text is None:
        return None
    try:
        return parse_wake_policy(text)
    except InvalidTaskError as error:
        raise FieldError(key, str(error)) from None


Rules = tuple[
    Spread | None,
    RunConditions,
    datetime | None,
    WakePolicy | None,
    After_,
    str | None,
    str | None,
]


def decode_rules_text(text: str | None) -> Rules:
    """A ``rules`` column back (spread, conditions, pause end, node, node tag);
    FieldError naming the field at fault."""
    if text is None:
        return None, NO_CONDITIONS, None, None, ((), False), None, None
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        raise FieldError("rules", "is not JSON") from None
    fields = Fields(value, "rules", RULES_KEYS)
    fields.check_version()
    return (
        decode_spread(fields.get("spread", None), "rules.spread"),
        decode_conditions(fields.get("conditions", None), "rules.conditions"),
        decode_paused_until(fields),
        decode_on_wake(fields),
        decode_after(fields.get("after", None), "rules.after"),
        fields.text("on_node", None, nullable=True),
        fields.text("on_tag", None, nullable=True),
    )
