"""WAL checkpoints on a thread of their own, every few seconds, whatever is due.

The scheduler's thread commits (and so grows the WAL); this thread folds the WAL back
into the database through a connection of its own (``taskgui.store.sqlite.wal_checkpoints``
says why not on the scheduler's thread). It only ever checkpoints: a failure is
logged (once until it changes) and tried again next time, because the scheduler's
own commits are what notice and report a store that stopped working.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from taskgui.store.errors import StoreError
from taskgui.store.protocols import Checkpointer

log = logging.getLogger(__name__)

CHECKPOINT_EVERY = 2.0  # seconds: a WAL of a few hundred KiB at a hundred runs a second
STOP_WAIT = 5.0  # seconds to wait for a checkpoint in progress when stopping


class BackgroundCheckpoints:
    """A daemon thread that checkpoints every ``every`` seconds until ``stop``."""

    def __init__(
        self, open_checkpointer: Callable[[], Checkpointer], every: float = CHECKPOINT_EVERY
    ) -> None:
        if not every > 0:
            raise ValueError(f"the checkpoint interval must be positive, not {every!r}")
        self._open = open_checkpointer
        self._every = every
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None
        self._last_problem: str | None = None
        self.done = 0  # checkpoints that ran (for tests and benchmarks)

    def start(self) -> None:
        if self._thread is None:
            self._thread = threading.Thread(
                target=self._serve, name="taskgui-checkpoints", daemon=True
            )
            self._thread.start()

    def stop(self, *_: object) -> None:
        """Stop after the checkpoint in progress, if any; safe to call more than once.

        Takes (and ignores) arguments so that it can be connected to ``destroyed``.
        """
        self._stopping.set()
        if self._thread is not None and self._thread is not threading.current_thread():
            self._thread.join(STOP_WAIT)

    def _serve(self) -> None:
        checkpointer: Checkpointer | None = None
        try:
            while not self._stopping.wait(self._every):
                try:
                    if checkpointer is None:
                        checkpointer = self._open()
                    checkpointer.checkpoint()
                except StoreError as error:
                    self._report(str(error))
                    continue
                self.done += 1
                self._last_problem = None
        finally:
            if checkpointer is not None:
                checkpointer.close()

    def _report(self, problem: str) -> None:
        if problem != self._last_problem:
            log.warning("WAL checkpoint failed (tried again in %g s): %s", self._every, problem)
            self._last_problem = problem
