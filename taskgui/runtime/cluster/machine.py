"""This node's machine, for the runs it claims: which conditions it meets, and which
runs to stop when one ends.

On a shared schedule the node that claims a run judges its conditions on its own
machine (``store.postgres.placement``): it claims only the runs its machine meets now,
and a run whose task asks to stop when its conditions end (``stop_when_unmet``) is
stopped here when one does, recorded as ``stopped`` ("stopped: on battery"); the
leader's engine then queues the same attempt again, for whichever node meets them.
As in a single process (``core.engine.condition_runs``), a fact the machine can no
longer report stops nothing: a run is stopped for what is known to be false.
"""

from __future__ import annotations

from datetime import timedelta

from taskgui.core.conditions import RunConditions, SystemConditions
from taskgui.core.engine.condition_runs import IDLE_WATCH
from taskgui.store.postgres.placement import Here, here


class MachineHere:
    """See the module docstring. Use from the node's thread."""

    def __init__(self) -> None:
        self.system: SystemConditions | None = None  # None: nothing read (yet)
        self._watched: dict[int, RunConditions] = {}  # going runs that stop when unmet
        self._stopping: dict[int, str] = {}  # run id -> the condition that ended

    @property
    def offers(self) -> Here:
        return here(self.system)

    def started(self, run_id: int, conditions: RunConditions) -> None:
        if conditions and conditions.stop_when_unmet:
            self._watched[run_id] = conditions

    def changed(self, system: SystemConditions) -> list[int]:
        """The machine's state moved: the going runs to stop now (their reasons kept)."""
        self.system = system
        stop: list[int] = []
        for run_id, conditions in self._watched.items():
            if run_id in self._stopping:
                continue
            unmet = conditions.unmet(system)
            if unmet is not None and unmet.checkable:
                self._stopping[run_id] = unmet.reason
                stop.append(run_id)
        return stop

    def ended(self, run_id: int) -> str | None:
        """A going run ended: why it was stopped here for its conditions, if it was."""
        self._watched.pop(run_id, None)
        return self._stopping.pop(run_id, None)

    def idle_look_in(self, wanted_s: float | None) -> timedelta | None:
        """When to read the idle time again: when the shortest idle time a waiting run
        needs (``wanted_s``) would be reached, or every ``IDLE_WATCH`` while a going
        run stops when the user comes back; None: no need to read it."""
        soonest: timedelta | None = None
        idle = None if self.system is None else self.system.idle_for
        if wanted_s is not None:
            soonest = (
                IDLE_WATCH
                if idle is None
                else max(timedelta(0), timedelta(seconds=wanted_s) - idle)
            )
        if any(c.idle_for is not None for c in self._watched.values()):
            soonest = IDLE_WATCH if soonest is None else min(soonest, IDLE_WATCH)
        return soonest
