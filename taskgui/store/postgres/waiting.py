"""Runs of a shared schedule that wait, dispatched and claimed by nobody: what each
node's machine offers, which runs no machine can take now, and the leader's give-up.

The leader dispatches a run without judging its conditions (``placement``); a node
claims it only where its own machine meets them. So a run can wait for two different
things: a free worker on a node that could take it, or a machine that meets its
conditions (every node on battery, say). Only the second is "waiting for its
conditions", which ``--give-up-after`` (and the task's next occurrence) limits, as on
a file's schedule; to tell them apart each node publishes what its machine offers
(``publish``), and the leader asks which waiting runs no answering node could take
(``unmet_runs``) and closes those whose time ran out (``give_up``), fenced by its
lease as a dispatch is.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from taskgui.core.conditions import Condition, SystemConditions
from taskgui.core.events import SKIP_WHY, SkipReason
from taskgui.core.nodes import SILENT_AFTER
from taskgui.core.states import RunOutcome, SlotKind, TaskState, WaitReason
from taskgui.core.status import TaskSnapshot
from taskgui.core.task import TaskId
from taskgui.store import codec
from taskgui.store.postgres.placement import here
from taskgui.store.postgres.session import Session

# The nodes that answer and may take run ``r`` (its pin), as a SQL condition on ``n``;
# its one parameter is how long a node may be silent and still answer.
ELIGIBLE = (
    "n.stopped_at IS NULL AND n.last_heartbeat > clock_timestamp() - %s "
    "AND (r.on_node IS NULL OR n.name = r.on_node) "
    "AND (r.on_tag IS NULL OR r.on_tag = ANY(n.tags))"
)
# ... and whose machine meets its conditions now (as a claim judges them).
MEETS = (
    "coalesce(r.needs, '{}') <@ coalesce(n.offers, '{}') "
    "AND (r.needs_idle_s IS NULL OR r.needs_idle_s <= n.offers_idle_s)"
)
WITH_CONDITIONS = "(r.needs IS NOT NULL OR r.needs_idle_s IS NOT NULL)"
GAVE_UP = f"skipped 1 occurrence ({SKIP_WHY[SkipReason.CONDITION]})"


@dataclass(frozen=True, slots=True, kw_only=True)
class WaitingRun:
    """A dispatched run nobody claimed whose conditions no answering node meets."""

    run_id: int
    task_id: TaskId
    kind: SlotKind
    scheduled_at: datetime


def publish(session: Session, node: str, system: SystemConditions | None) -> None:
    """Say what ``node``'s machine offers now: the conditions it meets (``here``) and,
    marked ``?name``, the ones it cannot read (so a window can say "cannot be checked"
    rather than "on battery"; a claim, which asks for the names, ignores them). None:
    it reads nothing yet. Written only when it changed, so a same reading wakes nobody."""
    met: list[str] | None = None
    idle: float | None = None
    if system is not None:
        offers = here(system)
        unknown = [f"?{c.value}" for c, fact in _FACTS if getattr(system, fact) is None]
        met, idle = sorted([*offers.met, *unknown]), offers.idle_s
    session.execute(
        "UPDATE nodes SET offers = %s, offers_idle_s = %s WHERE name = %s "
        "AND (offers IS DISTINCT FROM %s OR offers_idle_s IS DISTINCT FROM %s)",
        (met, idle, node, met, idle),
    )


# Which reading tells each named condition (None in it: the machine cannot tell).
_FACTS = (
    (Condition.AC_POWER, "on_battery"),
    (Condition.NETWORK, "online"),
    (Condition.UNMETERED, "metered"),
)


def unmet_runs(session: Session, silent_after: timedelta) -> list[WaitingRun]:
    """The open, unclaimed runs with conditions that no answering node may take now."""
    rows = session.query(
        "SELECT r.id, r.task_id, r.kind, r.scheduled_at FROM runs r "
        f"WHERE r.outcome IS NULL AND r.node IS NULL AND {WITH_CONDITIONS} "
        f"AND NOT EXISTS (SELECT 1 FROM nodes n WHERE {ELIGIBLE} "
        f"AND {MEETS}) "
        "ORDER BY r.id",
        (silent_after,),
    )
    return [
        WaitingRun(
            run_id=int(row[0]),
            task_id=int(row[1]),
            kind=SlotKind(row[2]),
            scheduled_at=codec.from_us(row[3]),
        )
        for row in rows
    ]


def give_up(
    session: Session, *, node: str, epoch: int, run_ids: Sequence[int], now: datetime
) -> list[int]:
    """As leader (``node``, ``epoch``): record these waiting runs as missed, "its run
    conditions did not hold in time"; the ids closed. A run a node claimed meanwhile
    is left to it (the row lock orders the two), and nothing is written unless this
    node still leads with ``epoch``. It never started: its row's start (the dispatch's
    moment, as every dispatched row has until a node starts it) is cleared, so its
    history reads as a file's missed record does, no start and no duration."""
    if not run_ids:
        return []
    rows = session.query(
        "UPDATE runs SET outcome = %s, finished_at = %s, error = %s, started_at = NULL "
        "WHERE id = ANY(%s) AND node IS NULL AND outcome IS NULL AND EXISTS ("
        "SELECT 1 FROM leadership WHERE id = 1 AND node = %s AND epoch = %s "
        "AND expires_at > clock_timestamp() FOR SHARE) RETURNING id",
        (RunOutcome.MISSED.value, codec.to_us(now), GAVE_UP, list(run_ids), node, epoch),
    )
    return sorted(int(row[0]) for row in rows)


# ------------------------------------------------- why a dispatched run waits


def _nodes_for(extra: str = "") -> str:
    """EXISTS: an answering node that may take run ``r`` (and ``extra`` holds on it)."""
    silent = f"interval '{SILENT_AFTER.total_seconds():g} seconds'"
    eligible = ELIGIBLE.replace("%s", silent)
    return f"EXISTS (SELECT 1 FROM nodes n WHERE {eligible}{f' AND {extra}' if extra else ''})"


def _offered(condition: str) -> str:
    return _nodes_for(f"'{condition}' = ANY(coalesce(n.offers, '{{}}'))")


_NAMED = ("ac_power", "network", "unmetered")  # WaitReason values, in reading order
# A condition no node that may take the run meets: named when one of them knows it
# does not hold there, else "uncheckable" (none of them can read it: ``?name``).
_NONE_OFFERS = " ".join(
    f"WHEN '{c}' = ANY(coalesce(r.needs, '{{}}')) AND NOT {_offered(c)} THEN CASE WHEN "
    + _nodes_for(f"n.offers IS NOT NULL AND NOT '?{c}' = ANY(n.offers)")
    + f" THEN '{c}' ELSE 'uncheckable' END"
    for c in _NAMED
)
# For each task whose open runs nobody has claimed: the first of them, and why it
# waits: "no_node" when no node it may go to answers, "node" while a machine that may
# take it meets its conditions, else the condition no such machine meets, or, where
# each meets some and fails another, "conditions_split" (naming one of them would say
# that the others hold there). Columns: task_id, reason, kind, scheduled_at.
UNCLAIMED_WAITS = (
    "SELECT DISTINCT ON (r.task_id) r.task_id, CASE "
    f"WHEN NOT {_nodes_for()} THEN 'no_node' "
    f"WHEN NOT {WITH_CONDITIONS} OR {_nodes_for(MEETS)} THEN 'node' "
    f"{_NONE_OFFERS} "
    f"WHEN r.needs_idle_s IS NOT NULL AND NOT {_nodes_for('r.needs_idle_s <= n.offers_idle_s')} "
    f"THEN CASE WHEN {_nodes_for('n.offers_idle_s IS NOT NULL')} THEN 'idle' "
    "ELSE 'uncheckable' END ELSE 'conditions_split' END, r.kind, r.scheduled_at "
    "FROM runs r WHERE r.outcome IS NULL AND r.node IS NULL AND NOT EXISTS ("
    "SELECT 1 FROM runs c WHERE c.task_id = r.task_id AND c.outcome IS NULL "
    "AND c.node IS NOT NULL) ORDER BY r.task_id, r.id"
)


@dataclass(frozen=True, slots=True, kw_only=True)
class UnclaimedWait:
    """Why a task's dispatched run waits for a node, and which run it is."""

    reason: WaitReason
    kind: SlotKind
    scheduled_at: datetime


def unclaimed_wait(reason: str | None, kind: str | None, at_us: int | None) -> UnclaimedWait | None:
    """``UNCLAIMED_WAITS``'s columns (after the task's id) as a value; None for none."""
    if reason is None or kind is None or at_us is None:
        return None
    return UnclaimedWait(
        reason=WaitReason(reason), kind=SlotKind(kind), scheduled_at=codec.from_us(at_us)
    )


def unclaimed_waits(session: Session) -> dict[TaskId, UnclaimedWait]:
    """Every task's ``UnclaimedWait``, for the command line's ``list`` and ``show``."""
    waits: dict[TaskId, UnclaimedWait] = {}
    for task_id, reason, kind, at_us in session.query(UNCLAIMED_WAITS):
        wait = unclaimed_wait(reason, kind, at_us)
        if wait is not None:
            waits[int(task_id)] = wait
    return waits


def as_waiting(snapshot: TaskSnapshot, wait: UnclaimedWait | None) -> TaskSnapshot:
    """The task as a person should read it while its run waits for a node: not running
    (no machine runs it), but due and waiting, for that reason, as a task of a file's
    schedule waits for a worker or its conditions (its stored state says "running":
    the leader's engine dispatched it)."""
    status = snapshot.status
    if wait is None or status.state is not TaskState.RUNNING:
        return snapshot
    return snapshot._replace(
        status=status._replace(
            state=TaskState.RETRYING if wait.kind is SlotKind.RETRY else TaskState.PENDING,
            running=0,
            running_since=None,
            nodes=(),
            waiting=wait.reason,
            next_run_at=wait.scheduled_at,
            slot_kind=wait.kind,
            scheduled_at=wait.scheduled_at,
        )
    )


class AsTheyWait:
    """A shared schedule's reads with ``as_waiting`` laid over every task (the
    ``list`` and ``show`` of the command line); anything else is the repository's."""

    def __init__(self, repository: Any) -> None:
        self._repository = repository
        self._waits = unclaimed_waits(repository.session)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._repository, name)

    def get(self, task_id: TaskId) -> TaskSnapshot:
        return as_waiting(self._repository.get(task_id), self._waits.get(task_id))

    def list_tasks(self, state: TaskState | None = None) -> list[TaskSnapshot]:
        tasks = [as_waiting(s, self._waits.get(s.id)) for s in self._repository.list_tasks()]
        return tasks if state is None else [s for s in tasks if s.state is state]

    def wait_reasons(self, task_ids: Collection[TaskId] | None = None) -> dict[TaskId, WaitReason]:
        reasons: dict[TaskId, WaitReason] = self._repository.wait_reasons(task_ids)
        wanted = self._waits.keys() if task_ids is None else self._waits.keys() & set(task_ids)
        reasons.update({task_id: self._waits[task_id].reason for task_id in wanted})
        return reasons
