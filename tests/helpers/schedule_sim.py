"""The scheduler service's loop around the real engine, on a FakeClock.

``SchedulerService`` wakes at each deadline and at each run's end, asks the engine what
is due, commits, and starts the runs. ``ServiceLoop`` does the same with no Qt, no
threads and no processes: runs "take" a chosen number of seconds on the monotonic clock,
so a wall-clock jump (or a sleep) leaves a run in flight going, as it would. A restart
(downtime) rebuilds the engine from what was persisted and goes on. Tests use it to
check properties over hours of schedule in milliseconds.

``Ledger`` is the accounting a person reading the history relies on: every occurrence
that passed either ran or is in a "missed" record with its count.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from taskgui.core.clock import FakeClock
from taskgui.core.engine.engine import Engine
from taskgui.core.events import Event, OccurrencesSkipped, RunDispatched, RunWithdrawn
from taskgui.core.recurrence import Recurrence
from taskgui.core.states import RunOutcome, SlotKind, TaskState
from taskgui.core.status import RunId
from taskgui.core.task import TaskId, TaskSpec
from tests.helpers.factories import T0


def occurrences_until(spec: TaskSpec, end: datetime) -> list[datetime]:
    """Every occurrence of the task's schedule from its first run time up to ``end``."""
    found: list[datetime] = []
    at: datetime | None = spec.recurrence.first_at_or_after(spec.first_run_at)
    while at is not None and at <= end:
        found.append(at)
        at = spec.recurrence.next_after(at)
    return found


def covered(recurrence: Recurrence, first_at: datetime, count: int) -> list[datetime]:
    """The occurrences one "skipped ``count`` from ``first_at``" record stands for."""
    found: list[datetime] = []
    at: datetime | None = first_at
    while at is not None and len(found) < count:
        found.append(at)
        at = recurrence.next_after(at)
    return found


@dataclass
class Ledger:
    """Per task: the occurrence times that ran, and the skip records."""

    ran: dict[TaskId, list[datetime]] = field(default_factory=dict)
    skipped: dict[TaskId, list[OccurrencesSkipped]] = field(default_factory=dict)

    def record(self, events: Iterable[Event]) -> None:
        for event in events:
            if isinstance(event, RunDispatched) and event.run.kind is SlotKind.OCCURRENCE:
                self.ran.setdefault(event.run.task_id, []).append(event.run.scheduled_at)
            elif isinstance(event, RunWithdrawn) and event.run.kind is SlotKind.OCCURRENCE:
                self.ran[event.run.task_id].remove(event.run.scheduled_at)
            elif isinstance(event, OccurrencesSkipped):
                self.skipped.setdefault(event.task_id, []).append(event)

    def accounted(self, spec: TaskSpec) -> list[datetime]:
        """Every occurrence this ledger says ran or was missed, sorted (duplicates kept)."""
        times = list(self.ran.get(spec.id, []))
        for skip in self.skipped.get(spec.id, []):
            assert skip.exact, skip
            times += covered(spec.recurrence, skip.first_at, skip.count)
        return sorted(times)

    def missed_count(self, task_id: TaskId) -> int:
        return sum(skip.count for skip in self.skipped.get(task_id, []))


@dataclass(frozen=True, slots=True)
class Flight:
    """A run in progress: when it ends (monotonic seconds) and how."""

    task_id: TaskId
    ends_at: float
    outcome: RunOutcome


Persist = Callable[[Sequence[Event], datetime], None]
Restart = Callable[[datetime], tuple[Engine, list[Event]]]


class ServiceLoop:
    """What ``SchedulerService`` does around the engine, driven by a FakeClock.

    ``persist`` commits each batch of events (a repository's ``apply``, or nothing);
    ``restart`` builds a new engine from what was persisted, after a process died.
    """

    def __init__(
        self,
        engine: Engine,
        *,
        workers: int,
        rng: random.Random,
        durations: Sequence[float] = (0.0,),
        failure_rate: float = 0.0,
        persist: Persist | None = None,
        restart: Restart | None = None,
        observe: Callable[[Sequence[Event]], None] | None = None,
    ) -> None:
        self.engine = engine
        self.clock = FakeClock(T0)
        self.workers = workers
        self.rng = rng
        self.durations = durations
        self.failure_rate = failure_rate
        self.flights: dict[RunId, Flight] = {}
        self.ledger = Ledger()
        self._persist = persist or (lambda events, now: None)
        self._restart = restart
        self._observe = observe or (lambda events: None)

    @property
    def now(self) -> datetime:
        return self.clock.now()

    # ------------------------------------------------------------ plumbing

    def commit(self, events: Sequence[Event]) -> list[Event]:
        """Persist, then act: as the service does (commit before acting)."""
        self._persist(events, self.now)
        self.ledger.record(events)
        self._observe(events)
        for event in events:
            if isinstance(event, RunDispatched):
                duration = self.rng.choice(self.durations)
                failed = self.rng.random() < self.failure_rate
                self.flights[event.run.run_id] = Flight(
                    event.run.task_id,
                    self.clock.monotonic() + duration,
                    RunOutcome.FAILED if failed else RunOutcome.SUCCEEDED,
                )
        return list(events)

    def dispatch(self) -> None:
        """The timer fired (or a change was made): dispatch until nothing more is due.

        A past deadline fires again at once, before any run could end: that is how
        a catch-up's next occurrence meets its own previous run still going.
        """
        for _ in range(100_000):
            free = self.workers - len(self.flights)
            self.commit(self.engine.due(self.now, free))
            deadline = self.engine.next_deadline()
            if deadline is None or deadline > self.now:
                return
        raise AssertionError("due() keeps finding work at the same moment")

    def finish_ended(self) -> bool:
        """Finish every run whose time is up, each followed by a dispatch; any?"""
        ended = sorted(
            (flight.ends_at, run_id)
            for run_id, flight in self.flights.items()
            if flight.ends_at <= self.clock.monotonic()
        )
        for _, run_id in ended:
            flight = self.flights.pop(run_id)
            self.commit(self.engine.finished(run_id, flight.outcome, self.now))
            self.dispatch()
        return bool(ended)

    def settle(self) -> None:
        """Everything that happens at this moment without time passing."""
        self.dispatch()
        while self.finish_ended():
            pass

    # -------------------------------------------------------- time passing

    def let_pass(self, seconds: float) -> None:
        """Normal time: wake at every deadline and every run's end on the way."""
        target = self.clock.monotonic() + seconds
        self.settle()
        while True:
            wakes = [flight.ends_at for flight in self.flights.values()]
            deadline = self.engine.next_deadline()
            if deadline is not None:
                wakes.append(self.clock.monotonic() + (deadline - self.now).total_seconds())
            wake = min([target, *wakes])
            step = max(0.0, wake - self.clock.monotonic())
            self.clock.advance(step)
            self.settle()
            if wake >= target:
                return

    def jump(self, seconds: float) -> None:
        """The wall clock jumps (or the machine slept): runs in flight keep their
        remaining time, and the service notices the jump and dispatches."""
        self.clock.jump_wall(timedelta(seconds=seconds))
        self.settle()

    def downtime(self, seconds: float) -> None:
        """The process dies, stays down ``seconds``, and a new one starts."""
        assert self._restart is not None, "this loop was built without a restart"
        self.flights.clear()  # their processes died with the scheduler (or were stopped)
        self.clock.advance(seconds)
        self.engine, events = self._restart(self.now)  # recovery committed these
        self.ledger.record(events)
        self._observe(events)
        self.settle()

    # -------------------------------------------------------------- people

    def act(self, events: list[Event]) -> None:
        self.commit(events)
        self.settle()

    def drain(self) -> None:
        """Let every outstanding decision be made at the current moment: resume what is
        paused, stop failing, bring waiting retries forward, until every queued run is
        in the future. Afterwards each occurrence up to now is accounted for."""
        self.failure_rate = 0.0
        self.durations = (0.0,)
        for snapshot in list(self.engine.snapshots()):
            if snapshot.spec.paused:
                self.act(self.engine.resume(snapshot.id))
        for _ in range(10_000):
            for run_id, flight in list(self.flights.items()):  # all end now, and well
                self.flights[run_id] = Flight(flight.task_id, 0.0, RunOutcome.SUCCEEDED)
            self.settle()
            retrying = [s.id for s in self.engine.snapshots() if s.state is TaskState.RETRYING]
            for task_id in retrying:
                self.act(self.engine.retry_now(task_id, self.now))
            if not retrying and not self.flights:
                return
        raise AssertionError("the schedule never came to rest")
