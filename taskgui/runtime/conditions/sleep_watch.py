"""The computer is about to sleep, or has just woken: logind's ``PrepareForSleep``.

``org.freedesktop.login1.Manager.PrepareForSleep(b)`` is sent on the system bus with
``true`` before a suspend or hibernation and ``false`` right after the resume. It is the
precise signal; where there is no logind (or no system bus) the scheduler still notices
a resume, later and less surely, from its wall clock running ahead of its monotonic
clock (``CLOCK_MONOTONIC`` stands still while the machine sleeps). Both reach the
service as ``woke``, so the calm wake-up does not depend on which one came first.
"""

from __future__ import annotations

from PySide6.QtCore import SLOT, QObject, Signal, Slot
from PySide6.QtDBus import QDBusConnection

LOGIND = ("org.freedesktop.login1", "/org/freedesktop/login1", "org.freedesktop.login1.Manager")


class SleepWatch(QObject):
    """``going_to_sleep()`` before a suspend; ``woke()`` right after the resume."""

    going_to_sleep = Signal()
    woke = Signal()

    def __init__(self, system_bus: QDBusConnection, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._bus = system_bus
        self.listening = False

    def start(self) -> bool:
        """Subscribe to the signal; False when there is no system bus to listen on."""
        if not self._bus.isConnected():
            return False
        service, path, interface = LOGIND
        # The stubs say bytes; PySide6 only accepts the str that SLOT() returns.
        self.listening = bool(
            self._bus.connect(  # type: ignore[call-overload]
                service, path, interface, "PrepareForSleep", self, SLOT("_on_prepare(bool)")
            )
        )
        return self.listening

    @Slot(bool)
    def _on_prepare(self, starting: bool) -> None:
        if starting:
            self.going_to_sleep.emit()
        else:
            self.woke.emit()
