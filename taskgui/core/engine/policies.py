"""The misfire, overlap and after-run policies, as pure functions.

Each takes a task's definition and the facts of the moment and returns a verdict; the
engine applies the verdict to its bookkeeping and queues. Kept apart from the engine
so the rules read (and can be tested) without the queues around them. None of them
mutates anything; ``after_run`` draws from the ``rng`` it is given (retry jitter).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import datetime, timedelta

from taskgui.core.events import OccurrencesSkipped, SkipReason, TaskExhausted
from taskgui.core.recurrence import CatchUp, Recurrence
from taskgui.core.states import MisfirePolicy, RunOutcome, TaskState
from taskgui.core.task import TaskSpec

# The state a one-off task ends in after its last run, by the run's outcome.
TERMINAL_FOR = {
    RunOutcome.SUCCEEDED: TaskState.SUCCEEDED,
    RunOutcome.FAILED: TaskState.EXHAUSTED,
    RunOutcome.TIMED_OUT: TaskState.EXHAUSTED,
    RunOutcome.INTERRUPTED: TaskState.EXHAUSTED,
    RunOutcome.CANCELLED: TaskState.CANCELLED,
    RunOutcome.MISSED: TaskState.MISSED,
}


@dataclass(frozen=True, slots=True)
class MisfireVerdict:
    """What to do with a late occurrence.

    ``run``: run it now. ``skipped``: the occurrences to count as missed, if any.
    ``slot_at``: when it runs, the occurrence the slot stands for from now on (None:
    the slot stays as it is); when it does not run, the next occurrence to queue
    (None: the schedule has no more, and the task ends as missed).
    """

    run: bool
    skipped: OccurrencesSkipped | None
    slot_at: datetime | None


def misfire(spec: TaskSpec, late_at: datetime, now: datetime, run_all_limit: int) -> MisfireVerdict:
    """Apply the misfire policy to the occurrence due at ``late_at``.

    Whatever it decides, every occurrence from the late one up to now is either left
    to run or counted in ``skipped``, and ``slot_at`` says which occurrence runs next,
    so nothing is counted twice: not when the slot comes back through ``due`` (a
    restart, a withdrawn run, a key that was busy) and is judged late again, because
    only occurrences after the slot are counted.
    """
    recurrence = spec.recurrence
    policy = spec.misfire
    catch = recurrence.catch_up(late_at, now)
    if policy is MisfirePolicy.RUN_ONCE:
        if not catch.missed:
            return MisfireVerdict(run=True, skipped=None, slot_at=None)
        # The catch-up run stands for the most recent occurrence that passed, and the
        # ones before it are the missed ones (as APScheduler coalesces); the schedule
        # goes on from it as from any run.
        skipped = OccurrencesSkipped(
            spec.id, catch.missed, catch.exact, late_at, SkipReason.MISFIRE
        )
        return MisfireVerdict(
            run=True, skipped=skipped, slot_at=latest_passed(recurrence, late_at, catch, now)
        )
    if policy is MisfirePolicy.SKIP:
        latest = latest_passed(recurrence, late_at, catch, now) if catch.missed else None
        if latest is not None and catch.exact and now - latest <= spec.misfire_grace:
            # The latest that passed is not late: inside its grace it runs, as it would
            # have alone ("run only within the grace of its time"); only those before it
            # were missed. It comes due again at once and is judged on its own. (Until
            # 2026-12-02 it was counted missed with them: 14 hourly tasks woken at 08:00
            # skipped their 08:00 runs.)
            skipped = OccurrencesSkipped(spec.id, catch.missed, True, late_at, SkipReason.MISFIRE)
            return MisfireVerdict(run=False, skipped=skipped, slot_at=latest)
        skipped = OccurrencesSkipped(
            spec.id, catch.missed + 1, catch.exact, late_at, SkipReason.MISFIRE
        )
        return MisfireVerdict(run=False, skipped=skipped, slot_at=catch.next_at)
    total = catch.missed + 1  # run_all
    if total <= run_all_limit:
        return MisfireVerdict(run=True, skipped=None, slot_at=None)
    dropped = total - run_all_limit
    skipped = OccurrencesSkipped(spec.id, dropped, catch.exact, late_at, SkipReason.MISFIRE)
    return MisfireVerdict(
        run=True, skipped=skipped, slot_at=recurrence.advance(late_at, dropped) or late_at
    )


def latest_passed(
    recurrence: Recurrence, slot_at: datetime, catch: CatchUp, now: datetime
) -> datetime:
    """The last occurrence at or before ``now``, ``catch.missed`` after ``slot_at``.

    When the count stopped at its cap (a minutely cron after weeks of downtime), that
    occurrence is not known without counting on; ``now`` stands in for it, which
    cron's arithmetic continues from as well (only cron counts with a cap).
    """
    if not catch.exact:
        return now
    return recurrence.advance(slot_at, catch.missed) or slot_at


def skip_passed(
    spec: TaskSpec, slot_at: datetime, now: datetime, reason: SkipReason
) -> tuple[OccurrencesSkipped, datetime | None]:
    """Skip the due occurrence and every later one already past (while the previous
    run goes, or as a backlog the misfire policy does not run): the record counting
    them all, and the next occurrence (None: none)."""
    catch = spec.recurrence.catch_up(slot_at, now)
    skipped = OccurrencesSkipped(spec.id, catch.missed + 1, catch.exact, slot_at, reason)
    return skipped, catch.next_at


def queue_behind(
    spec: TaskSpec, slot_at: datetime, now: datetime
) -> tuple[OccurrencesSkipped | None, datetime]:
    """Under ``--overlap queue``, which occurrence waits for the run in progress: the
    latest that passed, as one run stands for them (one waits at a time, so a run
    longer than the interval cannot pile up a queue without end); the record of the
    ones before it, missed for the overlap (None: there are none)."""
    catch = spec.recurrence.catch_up(slot_at, now)
    if not catch.missed:
        return None, slot_at
    skipped = OccurrencesSkipped(spec.id, catch.missed, catch.exact, slot_at, SkipReason.OVERLAP)
    return skipped, latest_passed(spec.recurrence, slot_at, catch, now)


@dataclass(frozen=True, slots=True)
class AfterRun:
    """What follows a run's end.

    ``retry_delay``: the next attempt is due this long after the end (nothing else
    applies then). ``exhausted``: the retries are used up. ``next_at``: a fixed-delay
    task's next occurrence. ``terminal``: the state a one-off task ends in.
    """

    retry_delay: timedelta | None = None
    exhausted: TaskExhausted | None = None
    next_at: datetime | None = None
    terminal: TaskState | None = None


def after_run(
    spec: TaskSpec,
    *,
    attempt: int,
    outcome: RunOutcome,
    now: datetime,
    rng: random.Random,
    idle: bool,
    fixed_delay: bool,
) -> AfterRun:
    """The retry policy, then (for a task with no queued slot and no run left,
    ``idle``) the fixed-delay plan or the end of a one-off task."""
    exhausted = None
    if outcome.is_failure:
        delay = spec.retry.next_delay(attempt, rng)
        if delay is not None:
            return AfterRun(retry_delay=delay)
        exhausted = TaskExhausted(
            task_id=spec.id, name=spec.name, attempts=attempt, outcome=outcome
        )
    if not idle:
        return AfterRun(exhausted=exhausted)
    if fixed_delay:
        interval = spec.recurrence.interval  # type: ignore[union-attr]
        return AfterRun(exhausted=exhausted, next_at=now + interval)
    if not spec.recurrence.is_recurring:
        return AfterRun(exhausted=exhausted, terminal=TERMINAL_FOR[outcome])
    return AfterRun(exhausted=exhausted)


def first_occurrence_from(spec: TaskSpec, now: datetime) -> datetime:
    """Where an edited schedule starts: its first run time, or for a recurring one
    whose first run time has passed, its first occurrence after ``now``."""
    if spec.first_run_at >= now or not spec.recurrence.is_recurring:
        return spec.recurrence.first_at_or_after(spec.first_run_at)
    next_at = spec.recurrence.catch_up(spec.first_run_at, now).next_at
    return next_at if next_at is not None else spec.first_run_at
