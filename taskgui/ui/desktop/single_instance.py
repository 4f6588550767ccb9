"""One window per schedule: a second start hands over to the first and exits.

The first instance listens on a local socket whose name is derived from the resolved
database path and the user id, so two different databases (or two users) never collide
and the same database always does. A second start connects, says ``show`` and exits;
the first raises its window.

The socket lives in a folder only this user can enter: ``$XDG_RUNTIME_DIR`` when it is
one (owned by the user, mode 0700, not a symlink, as the XDG spec promises), else a
folder of our own, ``<temp>/taskgui-<uid>``, made 0700. A folder by that name that is
someone else's, or open to others, or a symlink, is not trusted: another local user
who made it first could answer on our socket's name and make every start exit as
"already running". Then there is no hand-over at all (each start opens its own window;
the scheduler lock still lets only one run the schedule), and a warning says why. A
socket at the name that is not this user's is never connected to, and is replaced.

A socket file left behind by a crash is stale: nobody accepts on it. ``listen`` notices
(the connect fails), removes it and listens again.

Signals:
    message_received(str): another start sent this (``show``).
"""

from __future__ import annotations

import logging
import os
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

from taskgui.core.digest import blake2b
from taskgui.runtime.guard import never_raises

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_MS = 500
WRITE_TIMEOUT_MS = 1_000
SHOW = "show"


def server_name(
    database: Path,
    uid: int | None = None,
    environ: Mapping[str, str] | None = None,
    temp: str | None = None,
) -> str | None:
    """The socket for ``database`` (a full path, so the folder is ours, not Qt's temp);
    None when no folder private to this user can be had."""
    environ = os.environ if environ is None else environ
    uid = os.getuid() if uid is None else uid
    folder = socket_folder(uid, environ, tempfile.gettempdir() if temp is None else temp)
    if folder is None:
        return None
    try:
        resolved = database.expanduser().resolve()
    except OSError:
        resolved = database.absolute()
    # BLAKE2b, not hashlib's SHA-256, so a start loads no OpenSSL (see core.digest); a
    # window of an older taskgui listens under another name, and then a new start runs
    # into the schedule's lock instead and says who has it.
    digest = blake2b(f"{uid}\0{resolved}".encode(), digest_size=10).hexdigest()
    return str(folder / f"taskgui-{digest}.sock")


def socket_folder(uid: int, environ: Mapping[str, str], temp: str) -> Path | None:
    """``$XDG_RUNTIME_DIR`` if it is private to ``uid``, else our own folder in ``temp``."""
    runtime = environ.get("XDG_RUNTIME_DIR", "")
    if runtime and os.path.isabs(runtime) and is_private_folder(Path(runtime), uid):
        return Path(runtime)
    own = Path(temp) / f"taskgui-{uid}"
    try:
        own.mkdir(mode=0o700)
    except FileExistsError:
        pass
    except OSError as error:
        log.warning("one window per schedule is off: cannot make %s (%s)", own, error)
        return None
    if not is_private_folder(own, uid):
        log.warning(
            "one window per schedule is off: %s is not a folder only you can use (another "
            "user's, open to others, or a link); remove it to have it back",
            own,
        )
        return None
    return own


def is_private_folder(path: Path, uid: int) -> bool:
    """A real folder (not a symlink) owned by ``uid`` that nobody else may enter."""
    try:
        info = os.lstat(path)
    except OSError:
        return False
    return stat.S_ISDIR(info.st_mode) and info.st_uid == uid and not info.st_mode & 0o077


def _foreign_socket(name: str) -> bool:
    """Something is at ``name`` that is not a socket of this user's."""
    try:
        info = os.lstat(name)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    return not (stat.S_ISSOCK(info.st_mode) and info.st_uid == os.getuid())


class SingleInstance(QObject):
    """Claims the name of a schedule, or hands over to whoever holds it."""

    message_received = Signal(str)

    def __init__(self, name: str | None, parent: QObject | None = None) -> None:
        """``name`` None: no private place for a socket; every start is on its own."""
        super().__init__(parent)
        self.name = name
        self._server: QLocalServer | None = None

    @property
    def listening(self) -> bool:
        return self._server is not None and self._server.isListening()

    def send(self, message: str = SHOW) -> bool:
        """Tell a running instance ``message``; False when none is listening."""
        if self.name is None or _foreign_socket(self.name):
            return False
        socket = QLocalSocket()
        socket.connectToServer(self.name)
        if not socket.waitForConnected(CONNECT_TIMEOUT_MS):
            return False
        socket.write(f"{message}\n".encode())
        socket.flush()
        delivered = socket.waitForBytesWritten(WRITE_TIMEOUT_MS) or socket.bytesToWrite() == 0
        socket.disconnectFromServer()
        if socket.state() != QLocalSocket.LocalSocketState.UnconnectedState:
            socket.waitForDisconnected(WRITE_TIMEOUT_MS)
        return delivered

    def listen(self) -> bool:
        """Become the instance for this name; False when another one already is.

        Asks first: with access options set, Qt binds the socket elsewhere and renames
        it into place, which would silently take the name from a live instance. A
        leftover file that nobody answers on is removed.
        """
        if self.listening or self.name is None:
            return True
        if self._answers():
            return False
        QLocalServer.removeServer(self.name)  # stale (its owner died), or not ours
        server = QLocalServer(self)
        server.setSocketOptions(QLocalServer.SocketOption.UserAccessOption)
        if not server.listen(self.name):
            log.warning("cannot listen on %s: %s", self.name, server.errorString())
            server.deleteLater()
            return False
        server.newConnection.connect(self._on_server_new_connection)
        self._server = server
        return True

    def close(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server.deleteLater()
            self._server = None

    def _answers(self) -> bool:
        if self.name is None or _foreign_socket(self.name):
            return False
        socket = QLocalSocket()
        socket.connectToServer(self.name)
        connected = socket.waitForConnected(CONNECT_TIMEOUT_MS)
        if connected:
            socket.disconnectFromServer()
        return connected

    def _on_server_new_connection(self) -> None:
        server = self._server
        if server is None:
            return
        while server.hasPendingConnections():
            socket = server.nextPendingConnection()
            if socket is None:
                break
            socket.readyRead.connect(lambda s=socket: self._on_socket_ready_read(s))
            socket.disconnected.connect(socket.deleteLater)
            if socket.bytesAvailable():
                self._on_socket_ready_read(socket)

    @never_raises("reading from another taskgui start")
    def _on_socket_ready_read(self, socket: QLocalSocket) -> None:
        while socket.canReadLine():
            line = bytes(socket.readLine().data()).decode("utf-8", "replace").strip()
            if line:
                self.message_received.emit(line)
