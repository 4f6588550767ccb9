"""Where a shared schedule's run may go: its pin, and what the machine must offer.

The leader dispatches a run without judging its task's run conditions (on AC power,
online, unmetered, the user idle): that machine is not the one that will run it. The
run carries what it needs instead (``Placement``), as it carries a pin, and each node
claims only the runs its own machine meets now (``Here``, from its own readings), so a
claim never has to read the task. A run nobody's machine meets waits, dispatched and
unclaimed, without holding anyone's worker.
"""

from __future__ import annotations

from dataclasses import dataclass

from taskgui.core.conditions import MAX_IDLE, Condition, SystemConditions
from taskgui.core.task import TaskSpec

# What the leader's engine is told of the machine: everything holds, so it parks no
# due run on a condition (the claiming node judges them) and a run stopped because
# one ended comes due again at once, for a node whose machine meets them.
EVERYTHING_HOLDS = SystemConditions(on_battery=False, online=True, metered=False, idle_for=MAX_IDLE)

# The facts a claim compares by name; the idle time is compared as a number.
_NAMED = (Condition.AC_POWER, Condition.NETWORK, Condition.UNMETERED)


@dataclass(frozen=True, slots=True, kw_only=True)
class Placement:
    """What a dispatched run carries: its pin (node, tag) and the conditions (by name,
    and the idle time in seconds) the claiming node's machine must meet."""

    on_node: str | None = None
    on_tag: str | None = None
    needs: tuple[str, ...] | None = None
    idle_s: float | None = None

    @property
    def values(self) -> tuple[str | None, str | None, list[str] | None, float | None]:
        needs = None if self.needs is None else list(self.needs)
        return self.on_node, self.on_tag, needs, self.idle_s


def placement_of(spec: TaskSpec) -> Placement | None:
    """The placement of ``spec``'s runs; None for a task that may run anywhere."""
    conditions = spec.conditions
    if spec.on_node is None and spec.on_tag is None and not conditions:
        return None
    named = tuple(sorted(c.value for c in conditions.required if c in _NAMED))
    idle = conditions.idle_for
    return Placement(
        on_node=spec.on_node,
        on_tag=spec.on_tag,
        needs=named or None,
        idle_s=None if idle is None else idle.total_seconds(),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class Here:
    """What this node's machine offers now: the conditions met, by name, and how long
    the user has been idle (None: not known, so no idle condition is met here)."""

    met: tuple[str, ...] = ()
    idle_s: float | None = None


NOWHERE = Here()  # a node that reads nothing of its machine meets no condition


def here(system: SystemConditions | None) -> Here:
    """``Here`` from the machine's readings (a fact it cannot read is not met)."""
    if system is None:
        return NOWHERE
    met: list[str] = []
    if system.on_battery is False:
        met.append(Condition.AC_POWER.value)
    if system.online is True:
        met.append(Condition.NETWORK.value)
        if system.metered is False:
            met.append(Condition.UNMETERED.value)
    idle = system.idle_for
    return Here(met=tuple(met), idle_s=None if idle is None else idle.total_seconds())
