"""One object that knows the machine's state for run conditions, and says when it moves.

The scheduler service owns one and lives in its thread: the D-Bus answers arrive as
events there, so nothing ever waits on the bus. ``conditions_changed`` carries a fresh
``SystemConditions`` whenever a fact changes; the engine then looks again at exactly the
tasks that wait on a condition (no loop over tasks on a timer). Idle time is the one
fact that changes by itself: the service asks ``look_at_idle_in`` for the moment a
waiting task's idle condition would first hold, and the monitor reads it then.
"""

from __future__ import annotations

from datetime import timedelta

from PySide6.QtCore import QObject, Signal
from PySide6.QtDBus import QDBusConnection

from taskgui.core.conditions import SystemConditions
from taskgui.runtime.conditions.sources import IdleFact, NetworkFact, PowerFact


class ConditionMonitor(QObject):
    conditions_changed = Signal(object)  # SystemConditions

    def __init__(
        self,
        power: PowerFact,
        network: NetworkFact,
        idle: IdleFact,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._power = power
        self._network = network
        self._idle = idle
        for fact in (power, network, idle):
            fact.setParent(self)
            fact.changed.connect(self._on_fact_changed)

    @classmethod
    def of_this_machine(cls, parent: QObject | None = None) -> ConditionMonitor:
        """Read from the real system and session buses (absent buses: the kernel)."""
        system_bus = QDBusConnection.systemBus()
        return cls(PowerFact(system_bus), NetworkFact(system_bus), IdleFact(
            QDBusConnection.sessionBus()), parent)  # fmt: skip

    def start(self) -> None:
        self._power.start()
        self._network.start()
        self._idle.read()

    @property
    def current(self) -> SystemConditions:
        return SystemConditions(
            on_battery=self._power.on_battery,
            online=self._network.online,
            metered=self._network.metered,
            idle_for=self._idle.idle_for,
        )

    @property
    def sources(self) -> dict[str, str]:
        """Which service or file answered each fact: for the log and the dialog."""
        return {
            "power": self._power.source,
            "network": self._network.source,
            "idle": self._idle.source,
        }

    def look_at_idle_in(self, delay: timedelta | None) -> None:
        self._idle.look_in(delay)

    def _on_fact_changed(self) -> None:
        self.conditions_changed.emit(self.current)
