"""Waking when the change feed may have news, instead of asking it on a short timer.

The scheduler service answers what other processes ask (``inbox``) and checks that
its database file is still the one it opened; both only matter after another process
wrote. So it sleeps until the store's ``ChangeFeed`` offers a reason to look: its
descriptor becomes readable (PostgreSQL's LISTEN connection; the memory store's pipe),
or a file the store names changes (SQLite: the database and its -wal, through Qt's
file watcher, inotify on Linux). A request filed by the CLI is then taken within
milliseconds, where a 250 ms timer took 125 ms on average and woke four times a
second for nothing.

A slow safety poll stays (``SAFETY_POLL_MS``), because a feed can miss: a watched
file that is deleted or replaced drops out of the watch (re-added at the next look,
but a commit in between goes unseen), a PostgreSQL feed that reconnected listens on
a new descriptor (re-armed after each look) and cannot know what it missed while
away, a file system may not report writes made elsewhere (network and some FUSE
mounts), and the kernel's inotify watches can run out. When no wake can be set up at
all, the poll runs at the old ``FALLBACK_POLL_MS``.

Wakes are coalesced (``COALESCE_MS``): the service's own commits also write the -wal,
and a burst of them costs one look, not one per commit. A descriptor's notifier is
switched off from its wake until the look has drained it, so it never spins.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import QFileSystemWatcher, QObject, QSocketNotifier, QTimer

from taskgui.runtime.guard import never_raises
from taskgui.store.protocols import ChangeFeed

log = logging.getLogger(__name__)

SAFETY_POLL_MS = 2_000
FALLBACK_POLL_MS = 250
COALESCE_MS = 2


class FeedWatch(QObject):
    """Calls ``look`` when ``feed`` may have news; see the module docstring.

    ``look`` asks the feed (``changed``) and acts; it is called on this object's
    thread, never re-entered, and at least every ``safety_ms`` while started.
    """

    def __init__(
        self,
        feed: ChangeFeed,
        look: Callable[[], None],
        *,
        safety_ms: int | None = None,
        fallback_ms: int | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self._feed = feed
        self._look = look
        # Read when made, not when defined: a test can set the module's values.
        self._safety_ms = SAFETY_POLL_MS if safety_ms is None else safety_ms
        self._fallback_ms = FALLBACK_POLL_MS if fallback_ms is None else fallback_ms
        self._notifier: QSocketNotifier | None = None
        self._descriptor: int | None = None
        self._files: QFileSystemWatcher | None = None
        self._soon = QTimer(self)
        self._soon.setSingleShot(True)
        self._soon.setInterval(COALESCE_MS)
        self._soon.timeout.connect(self._on_soon_timeout)
        self._poll = QTimer(self)
        self._poll.timeout.connect(self._on_poll_timeout)
        self.looks = 0  # for tests and benchmarks: how often ``look`` ran
        self.started = False

    @property
    def woken_by(self) -> str:
        """``descriptor``, ``files`` or ``timer`` alone (nothing else could be set up)."""
        if self._notifier is not None:
            return "descriptor"
        if self._files is not None and self._files.files():
            return "files"
        return "timer"

    def start(self) -> None:
        self.started = True
        self._arm()
        self._poll.start(self._safety_ms if self.woken_by != "timer" else self._fallback_ms)

    def stop(self) -> None:
        self.started = False
        self._poll.stop()
        self._soon.stop()
        self._drop_notifier()
        if self._files is not None:
            paths = self._files.files()
            if paths:
                self._files.removePaths(paths)

    # -------------------------------------------------------------- arming

    def _arm(self) -> None:
        """Watch what the feed offers now (its descriptor may be a new one)."""
        descriptor = self._feed.fileno()
        if descriptor != self._descriptor:
            self._drop_notifier()
            if descriptor is not None:
                notifier = QSocketNotifier(descriptor, QSocketNotifier.Type.Read, self)
                notifier.activated.connect(self._on_activity)
                self._notifier, self._descriptor = notifier, descriptor
        elif self._notifier is not None:
            self._notifier.setEnabled(True)
        if self._notifier is None:
            self._watch_files()
        if self.started:  # a wake source came or went: the poll's pace follows
            wanted = self._safety_ms if self.woken_by != "timer" else self._fallback_ms
            if self._poll.interval() != wanted:
                self._poll.setInterval(wanted)

    def _watch_files(self) -> None:
        paths = [path for path in self._feed.watch_paths() if Path(path).exists()]
        if not paths:
            return
        if self._files is None:
            self._files = QFileSystemWatcher(self)
            self._files.fileChanged.connect(self._on_activity)
        missing = [path for path in paths if path not in self._files.files()]
        if missing:
            failed = self._files.addPaths(missing)
            if failed:  # out of inotify watches, say: the poll carries on
                log.debug("cannot watch %s for changes; asking on a timer", failed)

    def _drop_notifier(self) -> None:
        if self._notifier is not None:
            self._notifier.setEnabled(False)
            self._notifier.deleteLater()
        self._notifier, self._descriptor = None, None

    # --------------------------------------------------------------- slots

    def _on_activity(self, *_: object) -> None:
        if self._notifier is not None:
            self._notifier.setEnabled(False)  # until the look drained it
        if self.started and not self._soon.isActive():
            self._soon.start()

    @never_raises("looking at the change feed")
    def _on_soon_timeout(self) -> None:
        self._run()

    @never_raises("looking at the change feed")
    def _on_poll_timeout(self) -> None:
        self._run()

    def _run(self) -> None:
        if not self.started:
            return
        self.looks += 1
        try:
            self._look()
        finally:
            if self.started:
                self._arm()
