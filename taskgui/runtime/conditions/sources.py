"""Where each fact comes from: the desktop's services first, the kernel as a fallback.

- Power: UPower's ``OnBattery`` on the system bus; else ``/sys/class/power_supply``.
- Network: NetworkManager's ``Connectivity``, ``State`` and ``Metered`` on the system
  bus; else a default route in the kernel's routing table (metered then unknown).
- Idle: GNOME's ``org.gnome.Mutter.IdleMonitor`` or the freedesktop/KDE
  ``org.freedesktop.ScreenSaver`` on the session bus. Idle time grows by itself, so it is
  read when someone asks (``look_in``), never on a fixed beat.

The fallbacks are read on a slow timer (the kernel announces nothing); each source
says ``None`` when it has nothing at all, so a task can say "cannot check".
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtDBus import QDBusConnection, QDBusMessage, QDBusPendingCallWatcher

from taskgui.runtime.conditions.dbus_properties import CALL_TIMEOUT_MS, WatchedProperties
from taskgui.system import network_route, power_supply

UPOWER = ("org.freedesktop.UPower", "/org/freedesktop/UPower", "org.freedesktop.UPower")
NETWORK_MANAGER = (
    "org.freedesktop.NetworkManager",
    "/org/freedesktop/NetworkManager",
    "org.freedesktop.NetworkManager",
)
# NMConnectivityState and NMMetered, from NetworkManager's D-Bus API documentation.
NM_CONNECTIVITY_UNKNOWN = 0
NM_CONNECTIVITY_FULL = 4
NM_STATE_CONNECTED_GLOBAL = 70
NM_METERED_YES = {1, 3}  # yes, guess-yes
NM_METERED_NO = {2, 4}  # no, guess-no
IDLE_MONITORS = (
    # service, path, interface, method, unit in seconds
    ("org.gnome.Mutter.IdleMonitor", "/org/gnome/Mutter/IdleMonitor/Core",
     "org.gnome.Mutter.IdleMonitor", "GetIdletime", 0.001),
    ("org.freedesktop.ScreenSaver", "/org/freedesktop/ScreenSaver",
     "org.freedesktop.ScreenSaver", "GetSessionIdleTime", 1.0),
)  # fmt: skip
FALLBACK_POLL_MS = 30_000


class _Fact(QObject):
    """One fact about the machine with its current value; ``changed`` when it moves."""

    changed = Signal()

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._value: object = None
        self.source = "none"  # which service or file answered, for the log and About

    def _set(self, value: object, source: str) -> None:
        self.source = source
        if value != self._value:
            self._value = value
            self.changed.emit()


class _ServiceOrKernel(_Fact):
    """A fact read from a D-Bus service's properties, or from the kernel without one."""

    def __init__(
        self,
        bus: QDBusConnection,
        service: tuple[str, str, str],
        names: tuple[str, ...],
        read_kernel: Callable[[], object],
        *,
        poll_ms: int,
        parent: QObject | None,
    ) -> None:
        super().__init__(parent)
        self._read_kernel = read_kernel
        self._properties = WatchedProperties(bus, *service, names, parent=self)
        self._properties.values_changed.connect(self._on_properties_values_changed)
        self._properties.lost.connect(self._on_properties_lost)
        self._poll = QTimer(self)
        self._poll.setInterval(poll_ms)
        self._poll.timeout.connect(self._on_poll_timeout)
        self._service_name = service[0]

    def start(self) -> None:
        self._properties.start()

    def _from_service(self, values: dict[str, object]) -> object:
        raise NotImplementedError

    def _on_properties_values_changed(self, values: dict[str, object]) -> None:
        self._poll.stop()
        self._set(self._from_service(values), self._service_name)

    def _on_properties_lost(self, _why: str) -> None:
        self._on_poll_timeout()
        self._poll.start()

    def _on_poll_timeout(self) -> None:
        self._set(self._read_kernel(), "kernel")


class PowerFact(_ServiceOrKernel):
    """``on_battery``: bool, or None when neither UPower nor sysfs can say."""

    def __init__(
        self,
        system_bus: QDBusConnection,
        power_supply_root: Path = power_supply.POWER_SUPPLY,
        poll_ms: int = FALLBACK_POLL_MS,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(
            system_bus,
            UPOWER,
            ("OnBattery",),
            lambda: power_supply.on_battery(power_supply_root),
            poll_ms=poll_ms,
            parent=parent,
        )

    @property
    def on_battery(self) -> bool | None:
        return self._value if isinstance(self._value, bool) else None

    def _from_service(self, values: dict[str, object]) -> object:
        return bool(values["OnBattery"])


class NetworkFact(_ServiceOrKernel):
    """``(online, metered)``: each a bool or None (the kernel cannot tell metered)."""

    def __init__(
        self,
        system_bus: QDBusConnection,
        proc_net: Path = network_route.PROC_NET,
        sys_net: Path = network_route.SYS_NET,
        poll_ms: int = FALLBACK_POLL_MS,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(
            system_bus,
            NETWORK_MANAGER,
            ("Connectivity", "State", "Metered"),
            lambda: (network_route.online(proc_net, sys_net), None),
            poll_ms=poll_ms,
            parent=parent,
        )

    @property
    def online(self) -> bool | None:
        return self._value[0] if isinstance(self._value, tuple) else None

    @property
    def metered(self) -> bool | None:
        return self._value[1] if isinstance(self._value, tuple) else None

    def _from_service(self, values: dict[str, object]) -> object:
        connectivity = _as_int(values["Connectivity"])
        state = _as_int(values["State"])
        metered_code = _as_int(values["Metered"])
        if connectivity == NM_CONNECTIVITY_UNKNOWN:
            # Connectivity checking is off: trust the state, "connected (global)".
            online = state == NM_STATE_CONNECTED_GLOBAL
        else:
            online = connectivity == NM_CONNECTIVITY_FULL
        metered = (
            True
            if metered_code in NM_METERED_YES
            else False
            if metered_code in NM_METERED_NO
            else None
        )
        return (online, metered)


class IdleFact(_Fact):
    """How long the user has been idle, read when asked (``look_in``), or None."""

    def __init__(self, session_bus: QDBusConnection, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._bus = session_bus
        self._monitor = 0  # index into IDLE_MONITORS of the one being tried
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.read)
        self._watcher: QDBusPendingCallWatcher | None = None

    @property
    def idle_for(self) -> timedelta | None:
        return self._value if isinstance(self._value, timedelta) else None

    def look_in(self, delay: timedelta | None) -> None:
        """Read the idle time again after ``delay`` (None: stop looking)."""
        if delay is None:
            self._timer.stop()
            return
        milliseconds = max(0, min(int(delay.total_seconds() * 1000), 2**31 - 1))
        if not self._timer.isActive() or self._timer.remainingTime() > milliseconds:
            self._timer.start(milliseconds)

    def read(self) -> None:
        if self._watcher is not None or not self._bus.isConnected():
            if not self._bus.isConnected():
                self._set(None, "none")
            return
        if self._monitor >= len(IDLE_MONITORS):
            self._set(None, "none")
            return
        service, path, interface, method, _unit = IDLE_MONITORS[self._monitor]
        message = QDBusMessage.createMethodCall(service, path, interface, method)
        self._watcher = QDBusPendingCallWatcher(self._bus.asyncCall(message, CALL_TIMEOUT_MS), self)
        self._watcher.finished.connect(self._on_watcher_finished)

    def _on_watcher_finished(self, watcher: QDBusPendingCallWatcher) -> None:
        self._watcher = None
        watcher.deleteLater()
        service, _path, _interface, _method, unit = IDLE_MONITORS[self._monitor]
        if watcher.isError() or not watcher.reply().arguments():
            self._monitor += 1  # try the next monitor; None once all are missing
            self.read()
            return
        seconds = _as_int(watcher.reply().arguments()[0]) * unit
        self._set(timedelta(seconds=max(0.0, seconds)), service)


def _as_int(value: object) -> int:
    """A D-Bus integer of any width; anything else (a broken service) reads as 0."""
    try:
        return int(value)  # type: ignore[call-overload, no-any-return]
    except (TypeError, ValueError):
        return 0
