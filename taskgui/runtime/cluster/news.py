"""What a shared schedule's leader decided, told as a single process tells it.

``taskgui daemon`` on a file follows its ``SchedulerService``'s signals with a
``RunLog`` (the log's lines for failed attempts and tasks that give up) and a
``NotifyRelay`` (webhook and mail, by each task's rule: streaks, quiet hours). On a
shared schedule the same decisions are the leading node's engine's: a run's end,
wherever it ran, reaches that engine, whose retry policy says "retry" or "gave up".
So the leader tells here what its engine decided, from the outbox rows its fenced
commits wrote (``store.postgres.news``: the design, and why it does not depend on
timing), with the result the running node recorded (exit status, error), and the
same ``RunLog`` and relay follow it: the log lines and the notifications come from
the node that decided, once per decision, and only for what was committed (a
fenced-off write tells nothing; the next leader decides again and tells it). Rows a
teller that stopped answering left are claimed and told by the next leader.

A row is told when every signal's slot has run (``RunLog`` writes its lines there)
and every outlet (``hold_until_sent``: the webhook and mail dispatcher) has sent
what it was handed by then; only then does ``told`` name it, and the node deletes
it. A teller killed before that leaves the row to the next leader.

Signals: those of ``ScheduleSignals`` that an engine's events move (``run_finished``,
``retry_scheduled``, ``task_exhausted``), and
    told(list): these outbox rows were told (delete them);
    drained(): nothing handed to ``tell`` is waiting for an outlet any more (but what
        quiet hours hold).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Sequence

from PySide6.QtCore import QObject, Qt, Signal

from taskgui.core.status import RunRecord
from taskgui.core.task import TaskId
from taskgui.runtime.guard import service_slot
from taskgui.runtime.publishing import publish
from taskgui.runtime.schedule_signals import ScheduleSignals
from taskgui.store.postgres.news import NewsItem
from taskgui.store.protocols import TaskRepository

# Calls its argument (from any thread) once everything handed to the outlet before
# is sent, or given up on: ``Dispatcher.after_sent``. It may answer True: some of it
# is held until quiet hours end (``OutsideNotifications.after_sent``), so nobody should
# wait for it now (a stopping node leaves those rows to the next leader).
Outlet = Callable[[Callable[[], None]], bool | None]


class LeaderNews(ScheduleSignals):
    """See the module docstring; ``history`` is the store's, for a relay's streaks."""

    told = Signal(list)
    drained = Signal()
    _outlet_passed = Signal(int)  # from an outlet's thread, queued to this one

    def __init__(self, repository: TaskRepository, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._repository = repository
        self._outlets: list[Outlet] = []
        self._tokens = itertools.count(1)
        self._waiting: dict[int, tuple[list[int], int]] = {}  # token: (row ids, outlets left)
        self._held: set[int] = set()  # tokens an outlet holds until quiet hours end
        # Queued even from this thread: a row is deleted after the call that told it.
        self._outlet_passed.connect(self._on_outlet_passed, Qt.ConnectionType.QueuedConnection)

    def hold_until_sent(self, outlet: Outlet) -> None:
        """Count a row as told only once ``outlet`` sent what it was handed for it."""
        self._outlets.append(outlet)

    @property
    def pending(self) -> int:
        """Rows handed to ``tell`` and not yet told, less those held until quiet hours
        end (worth waiting for: they are being sent)."""
        return sum(len(ids) for token, (ids, _) in self._waiting.items() if token not in self._held)

    def tell(self, items: Sequence[NewsItem]) -> None:
        """Tell these outbox rows, in order. A stop the engine asks for is the running
        node's to make (it hears of a cancel from the store), so nothing is cancelled
        from here."""
        if not items:
            return
        for item in items:
            publish(self, item.events, item.results, lambda _run: None)
        ids = [item.id for item in items]
        token = next(self._tokens)
        self._waiting[token] = (ids, max(1, len(self._outlets)))
        if not self._outlets:
            self._outlet_passed.emit(token)
            return
        for outlet in self._outlets:
            if outlet(functools.partial(self._outlet_passed.emit, token)):
                self._held.add(token)

    @service_slot
    def _on_outlet_passed(self, token: int) -> None:
        waiting = self._waiting.get(token)
        if waiting is None:
            return
        ids, left = waiting
        if left > 1:
            self._waiting[token] = (ids, left - 1)
            return
        del self._waiting[token]
        self._held.discard(token)
        self.told.emit(ids)
        if not self.pending:
            self.drained.emit()

    def history(self, task_id: TaskId, limit: int = 100) -> list[RunRecord]:
        return self._repository.runs(task_id, limit)
