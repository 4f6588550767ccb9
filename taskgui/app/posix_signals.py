"""SIGINT and SIGTERM, delivered to a Qt event loop."""

from __future__ import annotations

import signal
import socket
from collections.abc import Callable

from PySide6.QtCore import QSocketNotifier


class SignalBridge:
    """Turns SIGINT/SIGTERM into a Qt callback via a socket the event loop watches.

    A Python signal handler only runs when the interpreter gets control, which a Qt
    event loop blocked in poll() would delay indefinitely; set_wakeup_fd makes the
    signal wake the loop.
    """

    def __init__(self, on_signal: Callable[[], object]) -> None:
        self._receive, self._send = socket.socketpair()
        self._receive.setblocking(False)
        self._send.setblocking(False)
        self._notifier = QSocketNotifier(self._receive.fileno(), QSocketNotifier.Type.Read)
        self._notifier.activated.connect(self._on_notifier_activated)
        self._callback = on_signal
        self._previous = signal.set_wakeup_fd(self._send.fileno())
        self._handlers = {
            signum: signal.signal(signum, lambda *_: None)
            for signum in (signal.SIGINT, signal.SIGTERM)
        }

    def _on_notifier_activated(self) -> None:
        try:
            data = self._receive.recv(64)
        except BlockingIOError:
            return
        if data:
            self._callback()

    def close(self) -> None:
        signal.set_wakeup_fd(self._previous)
        for signum, handler in self._handlers.items():  # or SIGTERM stays swallowed
            signal.signal(signum, handler)
        self._notifier.setEnabled(False)
        self._receive.close()
        self._send.close()
