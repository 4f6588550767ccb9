"""The nodes of a shared schedule: what each says of itself, in one frozen value.

The cluster reads them from the database, ``taskgui nodes`` prints them, the window's
follower hands them to View > Nodes: one value for all three, here at the bottom where
the store, the runtime and the window may all look, so none copies another's fields.
And the words for the node a waiting run wants, shared by the table and the CLI.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from taskgui.core.task import TaskSpec

# A node whose clock differs from the database's by more than this is warned about
# (leases are judged on the database's clock, so only what the node shows is off).
CLOCK_WARNING_MS = 1000.0
# A node that has not beaten for this long is not counted on: the leader rescues its
# runs only after its own ``dead_after``, but the CLI, the window and the waits shown
# for dispatched runs all call it "not answering" from here on.
SILENT_AFTER = timedelta(seconds=10)


def clock_is_off(offset_ms: float) -> bool:
    """True when a clock ``offset_ms`` from the database's is worth a warning."""
    return abs(offset_ms) > CLOCK_WARNING_MS


@dataclass(frozen=True, slots=True, kw_only=True)
class NodeInfo:
    """One node, as a row of ``taskgui nodes`` (``alive``: it answers heartbeats)."""

    name: str
    leader: bool
    pid: int
    host: str
    last_heartbeat: datetime
    running: int  # runs in progress on it
    version: str
    clock_offset_ms: float
    alive: bool
    tags: tuple[str, ...] = ()
    workers: int = 0  # its pool's size (taskgui daemon --workers N)
    # How old its heartbeat was when read, by the database's clock (the one heartbeats
    # are written by), so a view can tell it fell silent since without trusting its
    # own machine's clock against the database's.
    # Left out of equality: it differs at every read, and a view is told of the nodes
    # when something it shows changed (the heartbeat itself is compared).
    silent_for: timedelta = field(default=timedelta(0), compare=False)

    @property
    def clock_off(self) -> bool:
        return clock_is_off(self.clock_offset_ms)

    def answering_after(self, seconds: float) -> bool:
        """Whether it still counts as answering ``seconds`` after it was read, if no
        newer heartbeat was read meanwhile."""
        return (
            self.alive and self.silent_for.total_seconds() + seconds <= SILENT_AFTER.total_seconds()
        )


def node_wanted(spec: TaskSpec, *, none_answers: bool = False) -> str:
    """Which node a dispatched run of ``spec`` waits for, in the words the table,
    ``list`` and ``show`` give the ``node`` wait reason (``WaitReason.NODE``):
    ``node backup-box`` (its pin), ``a node tagged disk``, or ``a free node``.

    ``none_answers`` (``WaitReason.NO_NODE``): no node that may take it answers, said,
    because a tag nobody has reads like one whose nodes are busy otherwise and the two
    ask for different things (start a node with that tag, or wait)."""
    if spec.on_node is not None:
        return f"node {spec.on_node}" + (", which is not answering" if none_answers else "")
    if spec.on_tag is not None:
        away = "; no node that answers has that tag" if none_answers else ""
        return f"a node tagged {spec.on_tag}{away}"
    return "a node; none answers" if none_answers else "a free node"
