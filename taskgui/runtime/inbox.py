"""The request inbox: what other processes ask of the process running the schedule.

The CLI and windows following a daemon file requests through the store's
``RequestQueue``; the service performs each and answers it. Nobody polls the requests
themselves: when the store's ``ChangeFeed`` may have news (``feed_watch``: its
descriptor or files woke the service, or the slow safety poll came), the service asks
it whether another process committed anything (one cheap question: SQLite's ``PRAGMA
data_version``), and only then reads the open requests. The service's own commits
are never news.

Each request is answered whatever its row holds (see ``store.requests.answer_request``):
one bad row never leaves the others unanswered.

A burst of requests (an import of 100,000 tasks files a hundred notices of a thousand
each, every one a read of its tasks) is answered a slice at a time, ``SLICE_SECONDS``
of work and then back to the event loop, which takes up the rest next (``later``):
a Ctrl+C or a SIGTERM to a daemon waited until the whole burst was answered (3.5
minutes in a trial, when each task was its own notice). The rest is kept, not read
again at each slice (100,000 open requests take 0.2 s to read), and news that comes
meanwhile is read once the rest is answered, in the same chain of slices: one chain
at a time, whatever wakes the inbox during it (``next_turn`` coalesces).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from datetime import datetime
from typing import Protocol

from PySide6.QtCore import QObject, QTimer

from taskgui.core.clock import Clock
from taskgui.store.errors import StoreError
from taskgui.store.protocols import ChangeFeed, RequestQueue
from taskgui.store.requests import Perform, RequestRow, answer_request

SLICE_SECONDS = 0.05


class _Inbox(RequestQueue, ChangeFeed, Protocol):
    """The two seams an inbox needs of a store."""


class RequestInbox:
    """Performs and answers the store's open requests; see the module docstring.

    ``perform`` carries out one readable request and returns its error (or None);
    ``failed`` hears of a store that could not be read or written (the service stops
    dispatching until it works again); ``performed`` is called after any request was
    answered (the service dispatches: a request may have made something due);
    ``later`` has ``perform_open`` called again from the event loop soon, for the rest
    of a burst (None: a burst is answered whole).
    """

    def __init__(
        self,
        store: _Inbox,
        clock: Clock,
        *,
        perform: Perform,
        failed: Callable[[StoreError], None],
        performed: Callable[[], None],
        later: Callable[[], object] | None = None,
    ) -> None:
        self._store = store
        self._later = later
        self._clock = clock
        self._perform = perform
        self._failed = failed
        self._performed = performed
        self._rest: deque[RequestRow] = deque()  # of a burst, answered at later turns
        self._news = False  # another process committed while the rest waited

    def start(self) -> None:
        """Forget the changes before now, then answer whatever is open already."""
        try:
            self._store.changed()
        except StoreError as error:
            self._failed(error)
            return
        self.perform_open()

    def check(self) -> None:
        """The timer's work: read the requests only if another process committed."""
        try:
            changed = self._store.changed()
        except StoreError as error:
            self._failed(error)
            return
        if not changed:
            return
        if self._rest:  # a burst goes on: read again once its rest is answered
            self._news = True
        else:
            self.perform_open()

    def perform_open(self) -> None:
        """Answer the open requests (the rest of a burst first), a slice at a time."""
        rest = self._rest
        if not rest:
            self._news = False
            try:
                rest.extend(self._store.open_requests())
            except StoreError as failure:
                self._failed(failure)
                return
        answered = False
        until = self._clock.monotonic() + SLICE_SECONDS
        while rest:
            if answered and self._later is not None and self._clock.monotonic() > until:
                self._performed()
                self._later()  # the rest after the event loop's turn
                return
            row = rest.popleft()
            # Each answered, whatever the row holds (see answer_request).
            now: datetime = self._clock.now()
            problem = answer_request(row, now, self._perform)
            try:
                self._store.complete_request(row.id, problem, now)
            except StoreError as failure:
                rest.clear()  # read again when the store works: none is lost
                self._failed(failure)
                return
            answered = True
        # The feed is not asked again here: it reports only *other* connections'
        # commits, so a change now means a request filed while these were performed,
        # which the next check must still see.
        if answered:
            self._performed()
        if self._news and self._later is not None:
            self._later()  # what came meanwhile, read at the next turn


def next_turn(parent: QObject, call: Callable[[], None]) -> QTimer:
    """A timer that calls ``call`` at the event loop's next turn, once however often it
    is started before then (a burst's slices are one chain), and can be stopped."""
    timer = QTimer(parent)
    timer.setSingleShot(True)
    timer.setInterval(0)
    timer.timeout.connect(call)
    return timer
