"""Run conditions: start a task only when the machine is in a state that suits it.

Windows Task Scheduler's most used settings, for the Linux desktop: only on AC power,
only when the network is up (optionally not on a metered connection), only when the
user has been idle for a while. What a task asks for is a ``RunConditions``; what the
machine reports is a ``SystemConditions``, read from the desktop's own services by the
runtime. ``RunConditions.unmet`` joins the two, and it is pure, so the engine and the
tests decide the same way from the same facts.

A fact the machine cannot report (no UPower and no ``/sys/class/power_supply``; no
NetworkManager and no routing table; no idle monitor) is ``None``: a task that needs it
waits *and says so* ("cannot check the power supply on this system"), instead of
silently running anyway or silently never running. The dialog warns before such a task
is saved.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum

from taskgui.core.duration import check_duration, format_duration
from taskgui.core.errors import InvalidTaskError

MIN_IDLE = timedelta(minutes=1)
MAX_IDLE = timedelta(days=1)


class Condition(StrEnum):
    """One thing about the machine that a task may wait for."""

    AC_POWER = "ac_power"
    NETWORK = "network"
    UNMETERED = "unmetered"
    IDLE = "idle"


@dataclass(frozen=True, slots=True)
class SystemConditions:
    """What the machine reports now; ``None`` where it cannot be checked here."""

    on_battery: bool | None = None
    online: bool | None = None
    metered: bool | None = None
    idle_for: timedelta | None = None  # how long the user has not touched the machine

    def reads(self, condition: Condition) -> bool:
        """Whether this machine can report the fact ``condition`` depends on."""
        fact = {
            Condition.AC_POWER: self.on_battery,
            Condition.NETWORK: self.online,
            Condition.UNMETERED: self.metered,
            Condition.IDLE: self.idle_for,
        }[condition]
        return fact is not None


@dataclass(frozen=True, slots=True)
class Unmet:
    """Why a task's conditions do not hold: which one, in words for the table."""

    condition: Condition
    reason: str  # "on battery", "offline", "metered connection", "user active", ...
    checkable: bool = True  # False: this machine cannot report the fact at all


@dataclass(frozen=True, slots=True)
class RunConditions:
    """What a task needs of the machine before it starts (all of them must hold).

    ``stop_when_unmet``: a run in progress is stopped (SIGTERM to its group) when a
    condition stops holding, recorded as its own outcome, and run again when the
    conditions hold, without spending an attempt. ``give_up_after``: how long a due
    occurrence may wait for its conditions before it is recorded as missed; ``None``
    waits until the task's next occurrence is due.
    """

    ac_power: bool = False
    network: bool = False
    unmetered: bool = False  # implies network
    idle_for: timedelta | None = None
    stop_when_unmet: bool = False
    give_up_after: timedelta | None = None

    def __post_init__(self) -> None:
        if self.idle_for is not None:
            check_duration(self.idle_for, "the idle time")
            if not MIN_IDLE <= self.idle_for <= MAX_IDLE:
                raise InvalidTaskError(
                    f"the idle time must be between {format_duration(MIN_IDLE)} and "
                    f"{format_duration(MAX_IDLE)}"
                )
        if self.give_up_after is not None:
            check_duration(self.give_up_after, "the time to wait for conditions")
            if self.give_up_after <= timedelta(0):
                raise InvalidTaskError("the time to wait for conditions must be positive")

    @property
    def required(self) -> frozenset[Condition]:
        """The conditions asked for; a task with none never waits on the machine."""
        wanted: set[Condition] = set()
        if self.ac_power:
            wanted.add(Condition.AC_POWER)
        if self.network or self.unmetered:
            wanted.add(Condition.NETWORK)
        if self.unmetered:
            wanted.add(Condition.UNMETERED)
        if self.idle_for is not None:
            wanted.add(Condition.IDLE)
        return frozenset(wanted)

    def __bool__(self) -> bool:
        # Asked for every task the engine dispatches: no set built for it.
        return self.ac_power or self.network or self.unmetered or self.idle_for is not None

    def unmet(self, system: SystemConditions) -> Unmet | None:
        """The first condition that does not hold on ``system``, or None if all do.

        The order is the one a person reads best: power, then network, then the
        connection's cost, then the user's presence.
        """
        if self.ac_power:
            if system.on_battery is None:
                return Unmet(Condition.AC_POWER, "cannot check the power supply here", False)
            if system.on_battery:
                return Unmet(Condition.AC_POWER, "on battery")
        if self.network or self.unmetered:
            if system.online is None:
                return Unmet(Condition.NETWORK, "cannot check the network here", False)
            if not system.online:
                return Unmet(Condition.NETWORK, "offline")
        if self.unmetered:
            if system.metered is None:
                return Unmet(Condition.UNMETERED, "cannot tell if the connection is metered", False)
            if system.metered:
                return Unmet(Condition.UNMETERED, "metered connection")
        if self.idle_for is not None:
            if system.idle_for is None:
                return Unmet(Condition.IDLE, "cannot check idle time here", False)
            if system.idle_for < self.idle_for:
                return Unmet(Condition.IDLE, "user active")
        return None

    def idle_holds_in(self, system: SystemConditions) -> timedelta | None:
        """How much longer the user must stay idle for the idle condition to hold.

        None when it does not apply (no idle condition, or idle time unknown); zero when
        it holds. The runtime uses it to look again exactly then, instead of polling.
        """
        if self.idle_for is None or system.idle_for is None:
            return None
        return max(timedelta(0), self.idle_for - system.idle_for)

    def describe(self) -> str:
        """``"on AC power, network (not metered), idle 10m"``; empty when none."""
        parts: list[str] = []
        if self.ac_power:
            parts.append("on AC power")
        if self.unmetered:
            parts.append("network (not metered)")
        elif self.network:
            parts.append("network")
        if self.idle_for is not None:
            parts.append(f"idle {format_duration(self.idle_for)}")
        text = ", ".join(parts)
        if text and self.stop_when_unmet:
            text += "; stop if it ends"
        return text


NO_CONDITIONS = RunConditions()
