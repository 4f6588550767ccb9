"""Which node a shared schedule's dispatched run waits for, in words: the one table,
``list`` and ``show`` use for the ``node`` wait reason (``WaitReason.NODE``)."""

from __future__ import annotations

from taskgui.core.task import TaskSpec


def node_wanted(spec: TaskSpec) -> str:
    """``node backup-box`` (its pin), ``a node tagged disk``, or ``a free node``."""
    if spec.on_node is not None:
        return f"node {spec.on_node}"
    return f"a node tagged {spec.on_tag}" if spec.on_tag is not None else "a free node"
