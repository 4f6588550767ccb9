"""Which of the leader's reads may be out of date, from what the change feed heard.

Before each dispatch the leader looked at four things in the store: the ends of its
runs, tasks the CLI added, requests waiting for an answer, and the runs that wait for
a machine meeting their conditions. Asked on every wake-up, they were most of its SQL
(3.4 wake-ups a run on three nodes, 27-33 statements a run against a follower's 7),
and a busy machine makes each round trip wait for a CPU: the lead's tail lateness.

Each read is now made again only after a write that can change its answer: one the
change feed names (its notices carry the table), one of this node's own that the feed
leaves out (its claimer ended a run, it published what its machine offers, it
dispatched a run that must wait for a machine), and everything at take-over, after a
failure, after the feed was away, and at every membership step (a notice lost with a
connection costs at most that step's interval, never a missed change).
"""

from __future__ import annotations

from collections.abc import Iterable
from enum import Enum


class Read(Enum):
    """A read the leader makes before dispatching."""

    ENDED = "the ends of the runs it dispatched"
    ADDED = "tasks added by another process"
    REQUESTS = "requests to answer"
    WAITING = "runs waiting for a machine that meets their conditions"
    # Another node wrote a run: it can take or end a waiting run, never add one (only
    # the leader dispatches), so this matters only while some run waits.
    WAITING_TAKEN = "a waiting run claimed or ended elsewhere"
    # (This node's own claims are not marked: a run it claimed is no longer unmet, and
    # a give-up that still names it is refused by the row lock; at worst an early look.)


# The reads a write to each table can change; a table not named here changes all.
_READS_OF_TABLE: dict[str, frozenset[Read]] = {
    "runs": frozenset({Read.ENDED, Read.WAITING_TAKEN}),
    "tasks": frozenset({Read.ADDED}),
    "requests": frozenset({Read.REQUESTS}),
    "nodes": frozenset({Read.WAITING}),  # what a node's machine offers
}


class StaleReads:
    """The reads to make again; all of them at first. Use from one thread."""

    def __init__(self) -> None:
        self._stale = set(Read)

    def heard(self, tables: Iterable[str]) -> None:
        """Others wrote ``tables`` (the change feed's names for them)."""
        for table in tables:
            self._stale |= _READS_OF_TABLE.get(table, frozenset(Read))

    def mark(self, *reads: Read) -> None:
        """These may have changed (a write of this node's own, which the feed omits)."""
        self._stale.update(reads)

    def everything(self) -> None:
        """All may have changed (a take-over, a failure, a step, a feed that was away)."""
        self._stale = set(Read)

    def take(self, read: Read) -> bool:
        """Whether ``read`` must be made again; it counts as made from here on (a
        failure of it marks everything again)."""
        if read in self._stale:
            self._stale.discard(read)
            return True
        return False
