"""Follow a few D-Bus properties of one object, asynchronously, as they change.

UPower and NetworkManager publish their state as properties and announce changes with
``org.freedesktop.DBus.Properties.PropertiesChanged``. This reads the properties with
``Get`` (asynchronous calls: the thread that owns this object never waits on the bus),
and reads them again on every ``PropertiesChanged`` and whenever the service (re)appears
on the bus. The signal's own body is not decoded: PySide6 hands its ``a{sv}`` over as an
opaque ``QDBusArgument``, and one more ``Get`` per change costs nothing at this rate.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from PySide6.QtCore import SLOT, QObject, Signal, Slot
from PySide6.QtDBus import (
    QDBusConnection,
    QDBusMessage,
    QDBusPendingCallWatcher,
    QDBusServiceWatcher,
    QDBusVariant,
)

from taskgui.runtime.weak_slot import weak_slot

log = logging.getLogger(__name__)

PROPERTIES = "org.freedesktop.DBus.Properties"
CALL_TIMEOUT_MS = 2_000


class WatchedProperties(QObject):
    """``values_changed(dict)`` with every watched property; ``lost(str)`` when unreadable."""

    values_changed = Signal(object)
    lost = Signal(str)

    def __init__(
        self,
        bus: QDBusConnection,
        service: str,
        path: str,
        interface: str,
        names: Sequence[str],
        *,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._bus = bus
        self._service = service
        self._path = path
        self._interface = interface
        self._names = tuple(names)
        self._pending: dict[str, object] = {}
        self._answers = 0
        self._failed: str | None = None
        self._watchers: set[QDBusPendingCallWatcher] = set()
        self._values: dict[str, object] | None = None
        self._service_watcher = QDBusServiceWatcher(
            service, bus, QDBusServiceWatcher.WatchModeFlag.WatchForOwnerChange, self
        )
        self._service_watcher.serviceRegistered.connect(self._on_service_registered)
        self._service_watcher.serviceUnregistered.connect(self._on_service_unregistered)

    def start(self) -> None:
        if not self._bus.isConnected():
            self.lost.emit("no bus")
            return
        # The stubs say bytes; PySide6 only accepts the str that SLOT() returns.
        self._bus.connect(  # type: ignore[call-overload]
            self._service,
            self._path,
            PROPERTIES,
            "PropertiesChanged",
            self,
            SLOT("_on_properties_changed(QDBusMessage)"),
        )
        self.refresh()

    def refresh(self) -> None:
        """Read every property again; one answer (``values_changed`` or ``lost``) follows."""
        self._pending = {}
        self._answers = 0
        self._failed = None
        answered = weak_slot(WatchedProperties._on_get_finished, self)  # see weak_slot
        for name in self._names:
            message = QDBusMessage.createMethodCall(self._service, self._path, PROPERTIES, "Get")
            message.setArguments([self._interface, name])
            watcher = QDBusPendingCallWatcher(self._bus.asyncCall(message, CALL_TIMEOUT_MS), self)
            self._watchers.add(watcher)
            watcher.finished.connect(lambda w=watcher, n=name: answered(w, n))

    def _on_get_finished(self, watcher: QDBusPendingCallWatcher, name: str) -> None:
        self._watchers.discard(watcher)
        watcher.deleteLater()
        self._answers += 1
        if watcher.isError():
            self._failed = self._failed or watcher.error().name()
        else:
            arguments = watcher.reply().arguments()
            value = arguments[0] if arguments else None
            self._pending[name] = value.variant() if isinstance(value, QDBusVariant) else value
        if self._answers < len(self._names):
            return
        if self._failed is not None:
            self._values = None
            self.lost.emit(self._failed)
        elif self._pending != self._values:
            self._values = dict(self._pending)
            self.values_changed.emit(dict(self._pending))

    @Slot(QDBusMessage)
    def _on_properties_changed(self, message: QDBusMessage) -> None:
        arguments = message.arguments()
        if arguments and arguments[0] == self._interface:
            self.refresh()

    def _on_service_registered(self, _name: str) -> None:
        self.refresh()

    def _on_service_unregistered(self, _name: str) -> None:
        self._values = None
        self.lost.emit("service left the bus")
