"""One window per schedule: a second start hands over to the first and exits.

The first instance listens on a local socket whose name is derived from the resolved
database path and the user id, so two different databases (or two users) never collide
and the same database always does. A second start connects, says ``show`` and exits;
the first raises its window. The socket lives in ``$XDG_RUNTIME_DIR`` (private to the
user) when there is one, and only the user may connect to it either way.

A socket file left behind by a crash is stale: nobody accepts on it. ``listen`` notices
(the connect fails), removes it and listens again.

Signals:
    message_received(str): another start sent this (``show``).
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path

from PySide6.QtCore import QObject, Signal
from PySide6.QtNetwork import QLocalServer, QLocalSocket

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_MS = 500
WRITE_TIMEOUT_MS = 1_000
SHOW = "show"


def server_name(
    database: Path, uid: int | None = None, environ: Mapping[str, str] | None = None
) -> str:
    """The socket for ``database``: a full path, so its folder is chosen, not Qt's temp."""
    environ = os.environ if environ is None else environ
    uid = os.getuid() if uid is None else uid
    try:
        resolved = database.expanduser().resolve()
    except OSError:
        resolved = database.absolute()
    digest = hashlib.sha256(f"{uid}\0{resolved}".encode()).hexdigest()[:20]
    runtime = environ.get("XDG_RUNTIME_DIR", "")
    folder = runtime if runtime and os.path.isdir(runtime) else tempfile.gettempdir()
    return os.path.join(folder, f"taskgui-{uid}-{digest}.sock")


class SingleInstance(QObject):
    """Claims the name of a schedule, or hands over to whoever holds it."""

    message_received = Signal(str)

    def __init__(self, name: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.name = name
        self._server: QLocalServer | None = None

    @property
    def listening(self) -> bool:
        return self._server is not None and self._server.isListening()

    def send(self, message: str = SHOW) -> bool:
        """Tell a running instance ``message``; False when none is listening."""
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
        if self.listening:
            return True
        if self._answers():
            return False
        QLocalServer.removeServer(self.name)  # stale: its owner died
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

    def _on_socket_ready_read(self, socket: QLocalSocket) -> None:
        try:
            while socket.canReadLine():
                line = bytes(socket.readLine().data()).decode("utf-8", "replace").strip()
                if line:
                    self.message_received.emit(line)
        except Exception:
            log.exception("reading from another taskgui start failed")
