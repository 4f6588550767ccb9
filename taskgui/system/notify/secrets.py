"""The mail password in the desktop's keyring, through the Secret Service D-Bus API.

The freedesktop Secret Service (GNOME Keyring, KeePassXC, KWallet 6 and others serve
it) keeps the password; the settings file only says which account it is for. The
client is jeepney, a pure-Python D-Bus library, because the protocol needs one
connection throughout: a secret is read through a *session* opened on that connection
(``OpenSession``), and a session dies with its connection, so one ``gdbus`` call per
step cannot do it. QtDBus could, but this module runs on the dispatcher's thread and
in the Qt-free layers.

The session uses the ``plain`` algorithm: the password crosses the session bus, which
only this user's processes can reach, as every keyring client without the optional DH
encryption does. A locked keyring is reported, not unlocked: unlocking asks the person
for their keyring password, which only the desktop may do, and ``store`` from the
Settings dialog is where that happens (the keyring prompts on ``CreateItem``).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import TYPE_CHECKING, Any

from taskgui.system.notify.channel import ChannelError

if TYPE_CHECKING:
    from jeepney.io.blocking import DBusConnection

BUS_NAME = "org.freedesktop.secrets"
SERVICE_PATH = "/org/freedesktop/secrets"
SERVICE = "org.freedesktop.Secret.Service"
COLLECTION = "org.freedesktop.Secret.Collection"
APPLICATION = "taskgui"
TIMEOUT = 5.0
NO_PROMPT = "/"


def _jeepney(name: str) -> ModuleType:
    """A part of jeepney, imported when the keyring is first used, not when taskgui
    starts: a taskgui installed without it (an environment made before it was a
    dependency) still starts and runs every schedule; only the keyring says why not."""
    try:
        return importlib.import_module(name)
    except ImportError:
        raise ChannelError(
            "the keyring needs the jeepney package, which is not installed here: "
            "pip install jeepney (or make install again)"
        ) from None


@dataclass(frozen=True, slots=True)
class SecretServiceStore:
    """Reads and writes one password per ``account`` (``user@smtp-host``)."""

    account: str
    bus_address: str = "SESSION"  # jeepney's name for $DBUS_SESSION_BUS_ADDRESS

    def _attributes(self) -> dict[str, str]:
        return {"application": APPLICATION, "account": self.account}

    def _connect(self) -> DBusConnection:
        blocking = _jeepney("jeepney.io.blocking")
        try:
            connection: DBusConnection = blocking.open_dbus_connection(bus=self.bus_address)
            return connection
        except (OSError, KeyError, ValueError) as error:
            raise ChannelError(f"cannot reach the desktop session bus: {error}") from None

    @staticmethod
    def _call(connection: DBusConnection, path: str, interface: str, *call: Any) -> Any:
        jeepney = _jeepney("jeepney")
        address = jeepney.DBusAddress(path, bus_name=BUS_NAME, interface=interface)
        message = jeepney.new_method_call(address, *call)
        try:
            reply = connection.send_and_get_reply(message, timeout=TIMEOUT)
            return _jeepney("jeepney.wrappers").unwrap_msg(reply)
        except jeepney.DBusErrorResponse as error:
            if "ServiceUnknown" in str(error.name):
                raise ChannelError(
                    "no keyring: the desktop offers no Secret Service (install or start "
                    "GNOME Keyring, KeePassXC or KWallet)"
                ) from None
            raise ChannelError(f"the keyring refused: {error.name}") from None
        except TimeoutError:
            raise ChannelError("the keyring did not answer") from None

    def _session(self, connection: DBusConnection) -> str:
        _output, session = self._call(
            connection, SERVICE_PATH, SERVICE, "OpenSession", "sv", ("plain", ("s", ""))
        )
        return str(session)

    def lookup(self) -> str | None:
        """The stored password, or None when there is none; ChannelError when the
        keyring cannot be reached or is locked."""
        with self._connect() as connection:
            session = self._session(connection)
            unlocked, locked = self._call(
                connection, SERVICE_PATH, SERVICE, "SearchItems", "a{ss}", (self._attributes(),)
            )
            if not unlocked:
                if locked:
                    raise ChannelError("the keyring is locked; unlock it to send mail")
                return None
            (secrets,) = self._call(
                connection, SERVICE_PATH, SERVICE, "GetSecrets", "aoo", (unlocked[:1], session)
            )
            for _session_path, _parameters, value, _content_type in secrets.values():
                return bytes(value).decode("utf-8")
            return None

    def store(self, password: str) -> None:
        """Keep ``password`` in the default collection, replacing an older one."""
        if "\0" in password:
            raise ChannelError("the password contains a NUL character")
        with self._connect() as connection:
            session = self._session(connection)
            (collection,) = self._call(
                connection, SERVICE_PATH, SERVICE, "ReadAlias", "s", ("default",)
            )
            if str(collection) == NO_PROMPT:
                raise ChannelError("the keyring has no default collection to keep it in")
            properties = {
                "org.freedesktop.Secret.Item.Label": ("s", f"taskgui mail ({self.account})"),
                "org.freedesktop.Secret.Item.Attributes": ("a{ss}", self._attributes()),
            }
            secret = (session, b"", password.encode("utf-8"), "text/plain; charset=utf8")
            _item, prompt = self._call(
                connection,
                str(collection),
                COLLECTION,
                "CreateItem",
                "a{sv}(oayays)b",
                (properties, secret, True),
            )
            if str(prompt) != NO_PROMPT:
                raise ChannelError("the keyring asks to be unlocked first; unlock it and retry")
