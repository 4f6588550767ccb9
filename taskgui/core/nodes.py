"""The nodes of a shared schedule: what each says of itself, in one frozen value.

The cluster reads them from the database, ``taskgui nodes`` prints them, the window's
follower hands them to View > Nodes: one value for all three, here at the bottom where
the store, the runtime and the window may all look, so none copies another's fields.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

# A node whose clock differs from the database's by more than this is warned about
# (leases are judged on the database's clock, so only what the node shows is off).
CLOCK_WARNING_MS = 1000.0


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

    @property
    def clock_off(self) -> bool:
        return clock_is_off(self.clock_offset_ms)
