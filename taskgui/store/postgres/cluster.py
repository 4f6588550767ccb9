"""Several nodes, one schedule: the registry, the lease, fenced dispatch, claims, rescue.

Every decision about time is the database's (``clock_timestamp()``), never a node's
clock: a node whose clock is off, or that was paused for minutes (a closed lid,
SIGSTOP), cannot believe it still leads. Single-fire rests on two things that hold
whatever the timing:

* **the fencing token.** Leading means holding the one ``leadership`` row's current
  epoch with an unexpired lease. A dispatch inserts its runs only if, in the same
  statement, the row still names this node and epoch and the lease has not run out;
  the row is read ``FOR SHARE``, so a takeover waits until that dispatch commits and
  then bumps the epoch; every later dispatch of the old leader inserts nothing.
* **the run key.** ``runs_once`` allows one row per (task, kind, occurrence, attempt),
  so even two leaders racing could not both commit the same occurrence.

Work sharing: any node claims dispatched runs with ``FOR UPDATE SKIP LOCKED``, highest
priority first, skipping a run whose concurrency key is held by a run in progress
anywhere, and a run pinned to another node or to a tag this node lacks. A node that
stops answering (no heartbeat for ``dead_after``) has its runs closed as interrupted,
"rescued from node X, which stopped answering", by the leader.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from taskgui.core.nodes import NodeInfo
from taskgui.core.states import RunOutcome, SlotKind
from taskgui.core.task import TaskId
from taskgui.store import codec
from taskgui.store.postgres.placement import NOWHERE, Here
from taskgui.store.postgres.schema import RUN_KEY
from taskgui.store.postgres.session import Session

RESCUED_PREFIX = "rescued from node "  # how a leader tells a rescue from a node's stop
RESCUED_ERROR = RESCUED_PREFIX + "{node}, which stopped answering"


@dataclass(frozen=True, slots=True, kw_only=True)
class Lease:
    """This node leads until ``expires_at`` (database time) with fencing token ``epoch``."""

    node: str
    epoch: int
    expires_at: datetime


@dataclass(frozen=True, slots=True, kw_only=True)
class Dispatch:
    """One run the leader hands out: the run key and what claimers order by."""

    task_id: TaskId
    kind: SlotKind
    scheduled_at: datetime
    attempt: int
    priority: int = 0
    concurrency_key: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ClaimedRun:
    run_id: int
    task_id: TaskId
    kind: SlotKind
    scheduled_at: datetime
    attempt: int
    epoch: int


@dataclass(frozen=True, slots=True, kw_only=True)
class RescuedRun:
    run_id: int
    task_id: TaskId
    node: str
    attempt: int


def holds_lease(connection: Any, node: str, epoch: int) -> bool:
    """Inside a transaction: ``node`` leads with fencing token ``epoch`` and its lease
    has not run out. The row is read FOR SHARE, so a takeover waits until this
    transaction commits and then bumps the epoch: every later fenced write fails."""
    row = connection.execute(
        "SELECT 1 FROM leadership WHERE id = 1 AND node = %s AND epoch = %s "
        "AND expires_at > clock_timestamp() FOR SHARE",
        (node, epoch),
    ).fetchone()
    return row is not None


def _seconds(value: timedelta) -> float:
    return value.total_seconds()


class Cluster:
    """The cluster's SQL, on the node's own session (one thread at a time)."""

    def __init__(self, session: Session, node: str, tags: Sequence[str] = ()) -> None:
        self._session = session
        self.node = node
        self.tags = sorted(set(tags))  # a run pinned to one of these tags may run here
        self._limited_on: int | None = None  # the server process the limit is set on

    # -------------------------------------------------------------- registry

    def heartbeat(
        self, *, host: str, pid: int, version: str, node_now: datetime, workers: int
    ) -> float:
        """Register or refresh this node; return its clock's offset from the server's (ms)."""
        rows = self._session.query(
            "INSERT INTO nodes (name, host, pid, version, started_at, last_heartbeat, "
            "clock_offset_ms, workers, tags) VALUES (%(name)s, %(host)s, %(pid)s, "
            "%(version)s, clock_timestamp(), clock_timestamp(), "
            "1000 * EXTRACT(EPOCH FROM (%(now)s - clock_timestamp())), %(workers)s, "
            "%(tags)s) ON CONFLICT (name) DO UPDATE SET host = excluded.host, "
            "pid = excluded.pid, tags = excluded.tags, "
            "version = excluded.version, last_heartbeat = excluded.last_heartbeat, "
            "clock_offset_ms = excluded.clock_offset_ms, workers = excluded.workers, "
            "stopped_at = NULL, started_at = CASE WHEN nodes.pid = excluded.pid "
            "THEN nodes.started_at ELSE excluded.started_at END "
            "RETURNING clock_offset_ms",
            {
                "name": self.node,
                "host": host,
                "pid": pid,
                "version": version,
                "now": node_now,
                "workers": workers,
                "tags": self.tags,
            },
        )
        return float(rows[0][0])

    def live_twin(self, dead_after: timedelta) -> tuple[str, int, float] | None:
        """A process answering as this node now (host, pid, seconds since it was last
        heard from): heard from within ``dead_after`` and not stopped. None: nobody."""
        rows = self._session.query(
            "SELECT host, pid, EXTRACT(EPOCH FROM clock_timestamp() - last_heartbeat) "
            "FROM nodes WHERE name = %s AND stopped_at IS NULL "
            "AND last_heartbeat > clock_timestamp() - %s",
            (self.node, dead_after),
        )
        if not rows:
            return None
        host, pid, ago = rows[0]
        return str(host), int(pid), float(ago)

    def stopped(self) -> None:
        """A clean stop: give up the lead and say so, so nobody waits out the lease."""
        with self._session.transaction() as connection:
            connection.execute(
                "UPDATE leadership SET expires_at = '-infinity' WHERE node = %s", (self.node,)
            )
            connection.execute(
                "UPDATE nodes SET stopped_at = clock_timestamp() WHERE name = %s", (self.node,)
            )

    def resign(self) -> None:
        """Give the lead up now (a node leaving while its runs finish)."""
        self._session.execute(
            "UPDATE leadership SET expires_at = '-infinity' WHERE node = %s", (self.node,)
        )

    def nodes(self, dead_after: timedelta) -> list[NodeInfo]:
        rows = self._session.query(
            "SELECT n.name, (l.node = n.name AND l.expires_at > clock_timestamp()), n.pid, "
            "n.host, n.last_heartbeat, (SELECT count(*) FROM runs r WHERE r.node = n.name "
            "AND r.outcome IS NULL), n.version, n.clock_offset_ms, "
            "(n.stopped_at IS NULL AND n.last_heartbeat > clock_timestamp() - %s), n.tags, "
            "greatest(clock_timestamp() - n.last_heartbeat, interval '0'), n.workers "
            "FROM nodes n CROSS JOIN leadership l ORDER BY n.name",
            (dead_after,),
        )
        return [
            NodeInfo(
                name=row[0],
                leader=bool(row[1]),
                pid=row[2],
                host=row[3],
                last_heartbeat=row[4],
                running=int(row[5]),
                version=row[6],
                clock_offset_ms=float(row[7]),
                alive=bool(row[8]),
                tags=tuple(row[9] or ()),
                silent_for=row[10],
                workers=int(row[11]),
            )
            for row in rows
        ]

    # ----------------------------------------------------------------- lease

    def lead(self, lease: timedelta) -> Lease | None:
        """Renew this node's lease, or take the lead if it is free or ran out; None if
        another node holds it. A takeover bumps the epoch; a renewal keeps it."""
        self._limit_idle_transactions(lease)
        rows = self._session.query(
            "UPDATE leadership SET "
            "epoch = CASE WHEN node = %(node)s AND expires_at > clock_timestamp() "
            "THEN epoch ELSE epoch + 1 END, "
            "since = CASE WHEN node = %(node)s AND expires_at > clock_timestamp() "
            "THEN since ELSE clock_timestamp() END, "
            "node = %(node)s, expires_at = clock_timestamp() + %(lease)s "
            "WHERE id = 1 AND (node = %(node)s OR expires_at <= clock_timestamp()) "
            "RETURNING epoch, expires_at",
            {"node": self.node, "lease": lease},
        )
        if not rows:
            return None
        return Lease(node=self.node, epoch=int(rows[0][0]), expires_at=rows[0][1])

    def _limit_idle_transactions(self, lease: timedelta) -> None:
        """A node paused inside a transaction (a closed lid, SIGSTOP, a debugger) must not
        hold the leadership row's lock, which its dispatch takes, past its lease: the
        server ends such a transaction after half a lease, so another node can take the
        lead in time. What the paused node was doing is rolled back, and its epoch
        fences anything it tries once awake. Set once per server connection."""
        pid = self._session.backend_pid
        if pid is not None and pid == self._limited_on:
            return
        limit_ms = max(50, int(lease.total_seconds() * 500))
        self._session.execute(f"SET idle_in_transaction_session_timeout = {limit_ms}")
        self._limited_on = self._session.backend_pid

    def leader(self) -> tuple[str | None, int]:
        """Who leads now (None when the lease ran out), and the current epoch."""
        rows = self._session.query(
            "SELECT CASE WHEN expires_at > clock_timestamp() THEN node END, epoch "
            "FROM leadership WHERE id = 1"
        )
        return rows[0][0], int(rows[0][1])

    # -------------------------------------------------------------- dispatch

    def dispatch(self, epoch: int, runs: Sequence[Dispatch], now: datetime) -> list[int] | None:
        """Insert ``runs`` as dispatched under fencing token ``epoch``, in one transaction.

        Returns their row ids, or None if this node no longer leads with that epoch
        (nothing is inserted). An occurrence already dispatched (by anyone, at any
        epoch) is skipped, never inserted twice: its id is left out.
        """
        now_us = codec.to_us(now)
        with self._session.transaction() as connection:
            if not holds_lease(connection, self.node, epoch):
                return None
            ids: list[int] = []
            for run in runs:
                row = connection.execute(
                    "INSERT INTO runs (task_id, attempt, kind, scheduled_at, started_at, epoch, "
                    "priority, concurrency_key) VALUES (%s, %s, %s, %s, %s, %s, %s, %s) "
                    f"ON CONFLICT {RUN_KEY} DO NOTHING RETURNING id",
                    (
                        run.task_id,
                        run.attempt,
                        run.kind.value,
                        codec.to_us(run.scheduled_at),
                        now_us,
                        epoch,
                        run.priority,
                        run.concurrency_key,
                    ),
                ).fetchone()
                if row is not None:
                    ids.append(int(row[0]))
        return ids

    # ----------------------------------------------------------------- claim

    def claim(self, limit: int, here: Here = NOWHERE) -> list[ClaimedRun]:
        """Take up to ``limit`` dispatched runs for this node, highest priority first.

        Rows other nodes are claiming are skipped, not waited for (SKIP LOCKED); a run
        whose concurrency key a run in progress holds is left for later, and so is one
        whose run conditions this node's machine does not meet (``here``). The key
        check takes a transaction-level advisory lock per key, so two nodes claiming
        at once cannot both start a run of the same key.
        """
        if limit < 1:
            return []
        claimed: list[ClaimedRun] = []
        with self._session.transaction() as connection:
            candidates = connection.execute(
                "SELECT id, task_id, kind, scheduled_at, attempt, epoch, concurrency_key "
                "FROM runs WHERE outcome IS NULL AND node IS NULL "
                "AND (on_node IS NULL OR on_node = %s) AND (on_tag IS NULL OR on_tag = ANY(%s)) "
                "AND (needs IS NULL OR needs <@ %s::text[]) "
                "AND (needs_idle_s IS NULL OR needs_idle_s <= %s) "
                "ORDER BY priority DESC, id LIMIT %s FOR UPDATE SKIP LOCKED",
                (self.node, self.tags, list(here.met), here.idle_s, limit * 4),
            ).fetchall()
            held: set[str] = set()
            for row in candidates:
                if len(claimed) == limit:
                    break
                key = row[6]
                if key is not None:
                    if key in held or not self._key_free(connection, key):
                        continue
                    held.add(key)
                connection.execute("UPDATE runs SET node = %s WHERE id = %s", (self.node, row[0]))
                claimed.append(
                    ClaimedRun(
                        run_id=int(row[0]),
                        task_id=int(row[1]),
                        kind=SlotKind(row[2]),
                        scheduled_at=codec.from_us(row[3]),
                        attempt=int(row[4]),
                        epoch=int(row[5] or 0),
                    )
                )
        return claimed

    @staticmethod
    def _key_free(connection: Any, key: str) -> bool:
        connection.execute("SELECT pg_advisory_xact_lock(hashtext(%s))", (key,))
        busy = connection.execute(
            "SELECT 1 FROM runs WHERE concurrency_key = %s AND outcome IS NULL "
            "AND node IS NOT NULL LIMIT 1",
            (key,),
        ).fetchone()
        return busy is None

    def finish(
        self, run_id: int, outcome: RunOutcome, now: datetime, *, exit_code: int | None = None
    ) -> bool:
        """Record a claimed run's end; False if it is no longer this node's (rescued)."""
        rows = self._session.query(
            "UPDATE runs SET outcome = %s, finished_at = %s, exit_code = %s "
            "WHERE id = %s AND node = %s AND outcome IS NULL RETURNING id",
            (outcome.value, codec.to_us(now), exit_code, run_id, self.node),
        )
        return bool(rows)

    def finish_all(self, run_ids: Sequence[int], outcome: RunOutcome, now: datetime) -> set[int]:
        """Record the end of several claimed runs in one commit; the ids still this
        node's (the others were rescued meanwhile)."""
        rows = self._session.query(
            "UPDATE runs SET outcome = %s, finished_at = %s "
            "WHERE id = ANY(%s) AND node = %s AND outcome IS NULL RETURNING id",
            (outcome.value, codec.to_us(now), list(run_ids), self.node),
        )
        return {int(row[0]) for row in rows}

    # ---------------------------------------------------------------- rescue

    def rescue(self, epoch: int, dead_after: timedelta, now: datetime) -> list[RescuedRun] | None:
        """As leader: close the runs of nodes silent for ``dead_after`` as interrupted.

        None if this node no longer leads with ``epoch`` (nothing is changed). The
        history says which node stopped answering, so a possible duplicate (the node
        was only cut off, and its command still ran) is visible.
        """
        with self._session.transaction() as connection:
            if not holds_lease(connection, self.node, epoch):
                return None
            rows = connection.execute(
                "UPDATE runs r SET outcome = %s, finished_at = %s, "
                "error = replace(%s, '{node}', r.node) "
                "FROM nodes n WHERE r.node = n.name AND r.outcome IS NULL "
                "AND (n.stopped_at IS NOT NULL OR n.last_heartbeat < clock_timestamp() - %s) "
                "RETURNING r.id, r.task_id, r.node, r.attempt",
                (RunOutcome.INTERRUPTED.value, codec.to_us(now), RESCUED_ERROR, dead_after),
            ).fetchall()
        return [
            RescuedRun(run_id=int(r[0]), task_id=int(r[1]), node=r[2], attempt=int(r[3]))
            for r in rows
        ]
