"""Small fake UPower, NetworkManager and idle monitors, on a private D-Bus bus.

Run as ``python -m tests.helpers.fake_desktop_bus ADDRESS SERVICE...`` where SERVICE is
any of ``upower``, ``nm``, ``mutter``, ``screensaver``. It owns those names on the bus
at ADDRESS, answers ``Get`` on their properties (typed as the real services type them:
``OnBattery`` is ``b``, NetworkManager's codes are ``u``, Mutter's idle time is ``t``)
and prints ``ready``. Lines on stdin change the state and emit ``PropertiesChanged``
exactly as the real services do:

    set upower OnBattery true
    set nm Connectivity 1
    idle 600000            (milliseconds, for both idle monitors)
    drop upower            (release the name: the service "stops")
    own upower             (take it again)

It is written with jeepney, a D-Bus implementation independent of the QtDBus that
taskgui's client uses, so a marshalling mistake on either side shows up.
"""

from __future__ import annotations

import sys
import threading

from jeepney import (
    DBusAddress,
    HeaderFields,
    Message,
    MessageType,
    new_error,
    new_method_return,
    new_signal,
)
from jeepney.bus_messages import message_bus
from jeepney.io.blocking import DBusConnection, open_dbus_connection

PROPERTIES = "org.freedesktop.DBus.Properties"
SERVICES = {
    "upower": ("org.freedesktop.UPower", "/org/freedesktop/UPower", "org.freedesktop.UPower"),
    "nm": (
        "org.freedesktop.NetworkManager",
        "/org/freedesktop/NetworkManager",
        "org.freedesktop.NetworkManager",
    ),
    "mutter": (
        "org.gnome.Mutter.IdleMonitor",
        "/org/gnome/Mutter/IdleMonitor/Core",
        "org.gnome.Mutter.IdleMonitor",
    ),
    "screensaver": (
        "org.freedesktop.ScreenSaver",
        "/org/freedesktop/ScreenSaver",
        "org.freedesktop.ScreenSaver",
    ),
}
TYPES = {"OnBattery": "b", "Connectivity": "u", "State": "u", "Metered": "u"}


class FakeDesktop:
    def __init__(self, connection: DBusConnection, services: list[str]) -> None:
        self._connection = connection
        self._lock = threading.Lock()
        self.owned = set(services)
        self.properties: dict[str, dict[str, object]] = {
            "upower": {"OnBattery": False},
            "nm": {"Connectivity": 4, "State": 70, "Metered": 2},
        }
        self.idle_ms = 0

    def send(self, message: Message) -> None:
        with self._lock:
            self._connection.send(message)

    def own(self, key: str) -> None:
        self.send(message_bus.RequestName(SERVICES[key][0]))
        self.owned.add(key)

    def drop(self, key: str) -> None:
        self.send(message_bus.ReleaseName(SERVICES[key][0]))
        self.owned.discard(key)

    def set(self, key: str, name: str, text: str) -> None:
        value: object = text == "true" if TYPES[name] == "b" else int(text)
        self.properties[key][name] = value
        _service, path, interface = SERVICES[key]
        emitter = DBusAddress(path, interface=PROPERTIES)
        body: tuple[object, ...] = (interface, {name: (TYPES[name], value)}, [])
        self.send(new_signal(emitter, "PropertiesChanged", "sa{sv}as", body))

    def answer(self, message: Message) -> None:
        fields = message.header.fields
        path, member = fields.get(HeaderFields.path), fields.get(HeaderFields.member)
        for key, (_service, own_path, interface) in SERVICES.items():
            if path != own_path or key not in self.owned:
                continue
            if member == "Get" and key in self.properties:
                asked_interface, name = message.body
                if asked_interface == interface and name in self.properties[key]:
                    value = (TYPES[name], self.properties[key][name])
                    self.send(new_method_return(message, "v", (value,)))
                    return
            if member == "GetIdletime" and key == "mutter":
                self.send(new_method_return(message, "t", (self.idle_ms,)))
                return
            if member == "GetSessionIdleTime" and key == "screensaver":
                self.send(new_method_return(message, "u", (self.idle_ms // 1000,)))
                return
        self.send(new_error(message, "org.freedesktop.DBus.Error.UnknownMethod", "s", ("no",)))


def _read_commands(desktop: FakeDesktop) -> None:
    for line in sys.stdin:
        words = line.split()
        if words[:1] == ["set"]:
            desktop.set(words[1], words[2], words[3])
        elif words[:1] == ["idle"]:
            desktop.idle_ms = int(words[1])
        elif words[:1] == ["drop"]:
            desktop.drop(words[1])
        elif words[:1] == ["own"]:
            desktop.own(words[1])
        print("ok", flush=True)


def main(address: str, services: list[str]) -> None:
    connection = open_dbus_connection(bus=address)
    desktop = FakeDesktop(connection, services)
    for key in services:
        connection.send_and_get_reply(message_bus.RequestName(SERVICES[key][0]))
    print("ready", flush=True)
    threading.Thread(target=_read_commands, args=(desktop,), daemon=True).start()
    while True:
        message = connection.receive()
        if message.header.message_type == MessageType.method_call:
            desktop.answer(message)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2:])
