"""The cyclic garbage collector, run from a timer on the main (GUI) thread.

``system.collector`` says why: a cycle holding a Qt object must not be freed on a
worker thread. The window and both daemons start one of these before their threads
start, and stop it when the event loop has returned.
"""

from __future__ import annotations

from PySide6.QtCore import QObject, QTimer

from taskgui.runtime.guard import never_raises
from taskgui.system import collector

# Often enough that garbage never piles up for long (CPython's own threshold is 700
# new objects, a few milliseconds of busy Python), rarely enough to cost nothing
# when there is none: a tick with nothing to collect is a few counter reads.
INTERVAL_MS = 100


class MainThreadCollector(QObject):
    """Collects on its own thread's event loop; create it on the main thread."""

    def __init__(self, parent: QObject | None = None, interval_ms: int = INTERVAL_MS) -> None:
        super().__init__(parent)
        self._timer = QTimer(self)
        self._timer.setInterval(interval_ms)
        self._timer.timeout.connect(self._on_timer_timeout)

    def start(self) -> None:
        collector.collect_on_main_thread()
        self._timer.start()

    def stop(self) -> None:
        """Stop the timer and give collection back to CPython (at exit, tests)."""
        self._timer.stop()
        collector.collect_automatically()

    @never_raises("collecting garbage")
    def _on_timer_timeout(self) -> None:
        collector.collect_due()
