"""Fake desktop services served with jeepney, for a private bus (``private_bus``).

``FakeKeyring`` owns
``org.freedesktop.secrets`` there (a jeepney connection on a thread of its own) and
answers the calls ``SecretServiceStore`` makes, keeping items in a dict, so a test
sees what was stored, under which attributes, and can lock it.
"""

from __future__ import annotations

import threading
from typing import Any

from jeepney import DBusAddress, HeaderFields, MessageType, new_error, new_method_return, new_signal
from jeepney.bus_messages import message_bus
from jeepney.io.blocking import open_dbus_connection

from tests.helpers.notifications_xml import INTROSPECTION

COLLECTION = "/org/freedesktop/secrets/collection/login"
SESSION = "/org/freedesktop/secrets/session/s1"


class FakeKeyring:
    def __init__(self, address: str, *, with_default: bool = True) -> None:
        self.items: dict[str, tuple[dict[str, str], bytes, str]] = {}  # path -> attrs, value
        self.locked = False
        self.calls: list[str] = []
        self.with_default = with_default
        self._connection = open_dbus_connection(bus=address)
        self._connection.send_and_get_reply(message_bus.RequestName("org.freedesktop.secrets"))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(10)
        self._connection.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                message = self._connection.receive(timeout=0.1)
            except TimeoutError:
                continue
            if message.header.message_type is not MessageType.method_call:
                continue
            member = message.header.fields[HeaderFields.member]
            self.calls.append(member)
            reply = self._answer(message, member)
            self._connection.send(reply)

    def _answer(self, message: Any, member: str) -> Any:
        body = message.body
        if member == "OpenSession":
            return new_method_return(message, "vo", (("s", ""), SESSION))
        if member == "SearchItems":
            wanted = body[0]
            found = [p for p, (attrs, _, _) in self.items.items() if attrs == wanted]
            return new_method_return(message, "aoao", ([], found) if self.locked else (found, []))
        if member == "GetSecrets":
            secrets = {
                path: (SESSION, b"", self.items[path][1], self.items[path][2])
                for path in body[0]
                if path in self.items
            }
            return new_method_return(message, "a{o(oayays)}", (secrets,))
        if member == "ReadAlias":
            return new_method_return(message, "o", (COLLECTION if self.with_default else "/",))
        if member == "CreateItem":
            properties, (session, _params, value, content_type), replace = body
            attrs = properties["org.freedesktop.Secret.Item.Attributes"][1]
            assert session == SESSION
            existing = [p for p, (a, _, _) in self.items.items() if a == attrs]
            path = existing[0] if existing and replace else f"{COLLECTION}/{len(self.items) + 1}"
            self.items[path] = (attrs, bytes(value), content_type)
            return new_method_return(message, "oo", (path, "/"))
        return new_error(message, "org.freedesktop.DBus.Error.UnknownMethod", "s", (member,))


class FakeNotificationServer:
    """Owns ``org.freedesktop.Notifications`` on a private bus: records each ``Notify``
    call (its D-Bus signature and arguments) and answers id 7; ``click(key)`` then does
    what a person pressing that button does: emits ``ActionInvoked(7, key)``, typed
    exactly (``us``)."""

    NOTIFICATION_ID = 7
    PATH = "/org/freedesktop/Notifications"
    INTERFACE = "org.freedesktop.Notifications"

    def __init__(self, address: str) -> None:
        self.calls: list[tuple[str, str, tuple[Any, ...]]] = []
        self._clicks: list[str] = []
        self._connection = open_dbus_connection(bus=address)
        self._connection.send_and_get_reply(message_bus.RequestName(self.INTERFACE))
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(10)
        self._connection.close()

    def click(self, key: str) -> None:
        self._clicks.append(key)  # sent by the serving thread, which owns the connection

    def _serve(self) -> None:

        emitter = DBusAddress(self.PATH, interface=self.INTERFACE)
        while not self._stop.is_set():
            while self._clicks:
                key = self._clicks.pop(0)
                self._connection.send(
                    new_signal(emitter, "ActionInvoked", "us", (self.NOTIFICATION_ID, key))
                )
            try:
                message = self._connection.receive(timeout=0.05)
            except TimeoutError:
                continue
            if message.header.message_type is not MessageType.method_call:
                continue
            member = message.header.fields[HeaderFields.member]
            signature = message.header.fields.get(HeaderFields.signature, "")
            self.calls.append((member, signature, message.body))
            if member == "GetCapabilities":
                self._connection.send(new_method_return(message, "as", (["actions", "body"],)))
            elif member == "Notify":
                self._connection.send(new_method_return(message, "u", (self.NOTIFICATION_ID,)))
            elif member == "Introspect":
                self._connection.send(new_method_return(message, "s", (INTROSPECTION,)))
            else:
                self._connection.send(
                    new_error(message, "org.freedesktop.DBus.Error.UnknownMethod", "s", (member,))
                )
