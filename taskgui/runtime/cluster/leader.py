"""The engine of a shared schedule, held by the node that leads and only while it does.

The leader runs the one ``Engine`` (the same state machine a single process runs):
it decides what is due and commits each dispatch fenced by its epoch
(``PostgresRepository.apply_fenced``), as runs any node may claim. It does not run
them itself (its node's claimer does, like every other node's); it learns of their
ends by reading back the runs it dispatched, and gives each end to the engine, whose
retry and recurrence policies decide what follows, committed under the same fence.

Its engine is never trusted past a doubt: when it takes the lead (a new epoch) it
builds the engine from the store, carrying on the runs other nodes still run; when a
fenced write fails (it lost the lead, a run key was taken, the connection broke) the
engine is dropped and built again at the next step, from what was committed.

What it decides about runs' ends is told from the outbox (``store.postgres.news``):
each fenced commit's row is handed to ``tell`` right after the commit, and the rows
of tellers that stopped answering are claimed (fenced) when it takes the lead and at
every step (``tell_orphans``), and told by it.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta

from taskgui.control.operations import Operations
from taskgui.core.engine.condition_runs import give_up_at
from taskgui.core.engine.engine import Engine
from taskgui.core.errors import TaskguiError
from taskgui.core.events import Event, RunDispatched
from taskgui.core.states import SlotKind
from taskgui.core.status import RunId, RunResult
from taskgui.core.task import TaskSpec
from taskgui.runtime.cluster.stale_reads import Read, StaleReads
from taskgui.store.errors import StoreError
from taskgui.store.postgres import waiting
from taskgui.store.postgres.cluster import RESCUED_PREFIX, Lease
from taskgui.store.postgres.news import NewsItem, NewsRows
from taskgui.store.postgres.placement import Placement, placement_of
from taskgui.store.postgres.repository import FencedOffError, PostgresRepository
from taskgui.store.postgres.shared_runs import SharedRuns
from taskgui.store.postgres.takeover import highest_task_id, take_over
from taskgui.store.requests import Request, answer_request

log = logging.getLogger(__name__)

# Told the outbox rows to tell: what the leader committed under its fence, or claimed
# from a teller that stopped answering (``runtime.cluster.news``).
Tell = Callable[[Sequence[NewsItem]], None]


def _perform(operations: Operations, request: Request, now: datetime) -> str | None:
    try:
        operations.perform(request.op, request.task_id, request.payload, now)
    except FencedOffError:
        raise
    except TaskguiError as refusal:
        return str(refusal)
    return None


class Leader:
    """See the module docstring. Use from one thread."""

    def __init__(
        self,
        repository: PostgresRepository,
        runs: SharedRuns,
        *,
        dead_after: timedelta,
        rng: random.Random | None = None,
        tell: Tell | None = None,
    ) -> None:
        self._repository = repository
        self._runs = runs
        self._news = NewsRows(repository.session, runs.node)
        self._dead_after = dead_after
        self._rng = rng
        self._tell = tell
        self._results: dict[RunId, RunResult] = {}  # of the runs read back as ended
        self.engine: Engine | None = None
        self.epoch: int | None = None
        self._last_task = 0  # the highest task id the engine has seen
        self.stale = StaleReads()  # what to read again before the next dispatch
        self._give_up_next: datetime | None = None  # of the runs waiting, as last read
        self._some_wait = True  # whether runs waited for a machine at the last read

    def work(
        self, lease: Lease | None, now: datetime, ahead: datetime | None = None
    ) -> datetime | None:
        """Take in what changed, dispatch what is due; the next deadline (None: not
        leading, or nothing scheduled). ``ahead``: dispatch what is due by then already
        (its runs start at their time, on whichever node claims them)."""
        if lease is None:
            self.drop()
            return None
        try:
            if self.engine is None or self.epoch != lease.epoch:
                self._take_over(lease, now)
            engine = self.engine
            assert engine is not None
            # Judged at the dispatch's moment: a waiting occurrence gives way to the next
            # one dispatched ahead of its time, rather than have it skipped as overlap.
            by = max(now, ahead or now)
            soonest = self._give_up_next
            taken = self.stale.take(Read.WAITING_TAKEN) and self._some_wait
            if self.stale.take(Read.WAITING) or taken or (soonest is not None and soonest <= by):
                self._give_up_next = self._give_up(engine, lease, now, by)
            give_up_next = self._give_up_next
            events = self._ended(engine) if self.stale.take(Read.ENDED) else []
            if self.stale.take(Read.ADDED):
                events += self._added(engine)
            events += engine.due(by, self._runs.capacity(self._dead_after))
            results, self._results = self._results, {}
            if not self._commit(lease, events, now, results):
                return None
        except StoreError as error:
            log.warning("node %s: %s; the schedule is read again", self._runs.node, error)
            self.drop()
            return None
        except Exception:  # a bug: reported by the slot; what was taken is read again
            self.stale.everything()
            raise
        deadline = engine.next_deadline()
        if give_up_next is not None and (deadline is None or give_up_next < deadline):
            return give_up_next
        return deadline

    def _give_up(
        self, engine: Engine, lease: Lease, now: datetime, by: datetime
    ) -> datetime | None:
        """Record as missed the dispatched runs whose conditions no answering node's
        machine met before their time ran out (``--give-up-after``, else the task's
        next occurrence: ``give_up_at``, the rule a file's engine keeps) by ``by``,
        read back by ``_ended``; when the next of the others runs out (None: none
        waits for its conditions)."""
        soonest: datetime | None = None
        expired: list[int] = []
        unmet = waiting.unmet_runs(self._repository.session, self._dead_after)
        self._some_wait = bool(unmet)
        for run in unmet:
            if run.task_id not in engine:
                continue
            spec = engine.spec(run.task_id)
            until = give_up_at(
                spec, run.kind, run.scheduled_at, run.scheduled_at,
                next_at=_next_occurrence(engine, spec, run),
            )  # fmt: skip
            if until is None:
                continue
            if until <= by:
                expired.append(run.run_id)
            elif soonest is None or until < soonest:
                soonest = until
        closed = waiting.give_up(
            self._repository.session, node=self._runs.node, epoch=lease.epoch,
            run_ids=expired, now=now,
        )  # fmt: skip
        for run_id in closed:
            log.info("node %s: run %d waited for its conditions in vain", self._runs.node, run_id)
        if closed:  # ended by this node's own write, which the change feed omits
            self.stale.mark(Read.ENDED)
        return soonest

    def drop(self) -> None:
        """Forget the engine (the lead is lost, or it may no longer match the store)."""
        if self.engine is not None:
            log.info("node %s no longer dispatches", self._runs.node)
        self.engine = None
        self.epoch = None
        self.stale.everything()  # the next engine is built from the store, and looks anew

    def tell_orphans(self, lease: Lease | None) -> None:
        """Claim and tell the outbox rows whose teller stopped answering (see
        ``store.postgres.news``); only while this node leads with ``lease``."""
        if lease is None or self._tell is None:
            return
        try:
            items = self._news.orphaned(lease.epoch, self._dead_after)
        except StoreError as error:
            log.warning("node %s: %s", self._runs.node, error)
            return
        if items:
            tellers = sorted({item.teller for item in items})
            log.info(
                "node %s tells %d decision(s) %s committed and did not say it told "
                "(it stopped answering; some may be told twice)",
                self._runs.node,
                len(items),
                ", ".join(tellers),
            )
            self._tell(items)

    def _take_over(self, lease: Lease, now: datetime) -> None:
        self.tell_orphans(lease)  # older than anything this engine decides
        engine = Engine(rng=self._rng)
        taken = take_over(self._repository, self._runs, engine, now)
        self._last_task = highest_task_id(self._repository, engine)
        self.engine, self.epoch = engine, lease.epoch
        if not self._commit(lease, taken.events, now, taken.results):
            return
        log.info(
            "node %s dispatches (epoch %d): %d tasks, %d runs carried on",
            self._runs.node,
            lease.epoch,
            len(engine),
            len(engine.carried_ids),
        )

    def perform_requests(self, lease: Lease | None, now: datetime) -> bool:
        """Carry out what other processes asked (the CLI's cancel, pause, ...), each
        decided by the engine and committed under the fence; answered in the store.
        Whether any was answered (one may have made a run due)."""
        engine = self.engine
        if lease is None or engine is None or lease.epoch != self.epoch:
            return False
        if not self.stale.take(Read.REQUESTS):
            return False
        repository = self._repository
        try:
            pending = repository.open_requests()
            if not pending:
                return False
            operations = Operations(engine, repository)
            repository.fence = (self._runs.node, lease.epoch)
            try:
                for row in pending:
                    problem = answer_request(
                        row, now, lambda request, at: _perform(operations, request, at)
                    )
                    repository.complete_request(row.id, problem, now)
                # An edit can move when a waiting run gives way (its next occurrence).
                self.stale.mark(Read.WAITING)
            finally:
                repository.fence = None
        except FencedOffError:
            self.drop()  # the request stays open for the next leader
            return False
        except StoreError as error:
            log.warning("node %s: %s; the schedule is read again", self._runs.node, error)
            self.drop()
            return False
        return True

    def _ended(self, engine: Engine) -> list[Event]:
        """The ends of runs this leader dispatched or carried on, wherever they ran."""
        rows = self._repository.run_rows()
        by_row: dict[int, RunId] = {row: run for run, row in rows.items()}
        events: list[Event] = []
        self._results = {}
        for row, outcome, finished_at, result in self._runs.ended(list(by_row)):
            self._results[by_row[row]] = result
            # A rescued run died with its node: it spends its attempt, as a crash does.
            rescued = (result.error or "").startswith(RESCUED_PREFIX)
            events += engine.finished(by_row[row], outcome, finished_at, crashed=rescued)
        return events

    def _added(self, engine: Engine) -> list[Event]:
        """Tasks another process added (the CLI writes them straight to the store)."""
        events: list[Event] = []
        for snapshot in self._runs.tasks_after(self._last_task):
            self._last_task = max(self._last_task, snapshot.spec.id)
            if snapshot.spec.id not in engine:
                events += engine.add(snapshot.spec)
        return events

    def _commit(
        self,
        lease: Lease,
        events: list[Event],
        now: datetime,
        results: Mapping[RunId, RunResult],
    ) -> bool:
        """Commit ``events`` fenced (``results``: of the runs that ended with them),
        then tell what the commit put in the outbox."""
        node = self._runs.node
        placements: dict[int, Placement] = {}
        engine = self.engine
        for event in events:  # where each run may go (its pin, its conditions): on the run
            if isinstance(event, RunDispatched) and engine is not None:
                placement = placement_of(engine.snapshot(event.run.task_id).spec)
                if placement is not None:
                    placements[event.run.task_id] = placement
        if placements:  # runs that may wait for a machine: when they give up may move
            self.stale.mark(Read.WAITING)
        written = self._repository.apply_fenced(
            events, now, node=node, epoch=lease.epoch, results=results, placements=placements
        )
        if written is not None:
            if written.news is not None and self._tell is not None:
                self._tell([written.news])
            return True
        log.info("node %s: a dispatch was fenced off; the schedule is read again", node)
        self.drop()
        return False


def _next_occurrence(engine: Engine, spec: TaskSpec, run: waiting.WaitingRun) -> datetime | None:
    """The occurrence a waiting run of a spread task gives way to, as on a file: the
    one after its own occurrence, not after the spread start the run carries (later by
    its offset: the next occurrence, drawn a smaller offset, would come due while this
    one still waits, and be skipped as an overlap). The engine moved the task's slot to
    it when it dispatched the run. None (reckon from the run's time): no spread, or the
    slot is no longer that occurrence (a run now, an edit)."""
    if spec.spread is None or run.kind is not SlotKind.OCCURRENCE:
        return None
    status = engine.snapshot(run.task_id).status
    after_start = spec.recurrence.next_after(run.scheduled_at)
    slot = status.scheduled_at if status.slot_kind is SlotKind.OCCURRENCE else None
    if slot is None or slot <= run.scheduled_at:
        return None
    return slot if after_start is None or slot <= after_start else None
