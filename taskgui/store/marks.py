"""The ``after_marks`` column: which upstreams of a task have completed since its last
trigger (fan-in, core/dependencies.py), as a compact JSON list of task ids, NULL for
none. Written with the status; read back keeping only the task's own upstreams."""

from __future__ import annotations

import json

from taskgui.core.task import TaskSpec
from taskgui.store.errors import CodecError


def marks_text(marks: frozenset[int]) -> str | None:
    """The column's value for these marks."""
    return json.dumps(sorted(marks), separators=(",", ":")) if marks else None


def decode_marks(text: object, spec: TaskSpec) -> frozenset[int]:
    """The stored fan-in marks (a JSON list of upstream ids); ids that are no longer
    upstreams of the task are dropped (its edges were edited since)."""
    if text is None:
        return frozenset()
    try:
        value = json.loads(text) if isinstance(text, str) else None
    except (ValueError, RecursionError):
        value = None
    if not isinstance(value, list) or not all(type(item) is int for item in value):
        raise CodecError("after_marks: expected a JSON list of task ids")
    upstreams = {edge.task_id for edge in spec.after}
    return frozenset(item for item in value if item in upstreams)
