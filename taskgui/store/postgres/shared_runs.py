"""The runs of a shared schedule as its nodes see them: the leader's reads and a
claimer's writes, each fenced by the node's name.

A node restarting under the same name closes only the runs it had itself claimed
(its previous process ran them); another node's runs go on, and a silent node's are
the leader's to rescue (``Cluster.rescue``). The leader learns what happened to the
runs it dispatched by reading them back (another node may have run them), and a new
leader carries on the runs dispatched before it led (``Engine.load``'s
``carried_on``).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from taskgui.core.engine.engine import CarriedRun
from taskgui.core.states import RunOutcome, SlotKind
from taskgui.core.status import RunRecord, RunResult, TaskSnapshot
from taskgui.core.task import TaskId
from taskgui.store import codec
from taskgui.store.errors import CodecError
from taskgui.store.postgres.cluster import RESCUED_PREFIX
from taskgui.store.postgres.reads import NOT_QUARANTINED, SELECT_TASKS, pg_text
from taskgui.store.postgres.session import Session
from taskgui.store.protocols import INTERRUPTED_ERROR, cap_output
from taskgui.store.run_rows import RUN_COLUMNS, run_record


class SharedRuns:
    """Runs and tasks read and written by one node (``node``), on its session."""

    def __init__(self, session: Session, node: str) -> None:
        self._session = session
        self.node = node

    # ----------------------------------------------------------- any node

    def interrupt_own(self, now: datetime) -> list[RunRecord]:
        """Close the runs this node's previous process claimed and left open."""
        rows = self._session.query(
            f"UPDATE runs SET outcome = %s, finished_at = %s, error = %s "
            f"WHERE node = %s AND outcome IS NULL RETURNING {RUN_COLUMNS}",
            (RunOutcome.INTERRUPTED.value, codec.to_us(now), INTERRUPTED_ERROR, self.node),
        )
        return sorted((run_record(row) for row in rows), key=lambda record: record.id)

    def rescued_from_last_process(self) -> list[RunRecord]:
        """The runs the leader rescued from this node's previous process, with a pid.

        That process stopped answering (killed, frozen, cut off) and the leader closed
        its runs and had them retried elsewhere; on this machine their commands may
        still run beside the retries. A restart (before it beats: the node's row still
        holds the previous process's start) reads them so that it can stop what they
        left running, as it does for its own runs left open (``interrupt_own``); the
        run's mark finds only that run's processes. A minute's slack for the leader's
        clock, which wrote the rescue's time, against the database's.
        """
        rows = self._session.query(
            f"SELECT {RUN_COLUMNS} FROM runs WHERE node = %s AND outcome = %s "
            "AND pid IS NOT NULL AND starts_with(error, %s) AND finished_at >= ("
            "SELECT (extract(epoch FROM started_at) * 1000000)::bigint - 60000000 "
            "FROM nodes WHERE name = %s)",
            (self.node, RunOutcome.INTERRUPTED.value, RESCUED_PREFIX, self.node),
        )
        return sorted((run_record(row) for row in rows), key=lambda record: record.id)

    def started(self, run_id: int, pid: int, now: datetime) -> None:
        """A claimed run's command started: its process, for a rescue to stop."""
        self._session.execute(
            "UPDATE runs SET pid = %s, started_at = %s WHERE id = %s AND node = %s",
            (pid, codec.to_us(now), run_id, self.node),
        )

    def finish(
        self,
        run_id: int,
        outcome: RunOutcome,
        now: datetime,
        result: RunResult,
        *,
        took: float | None = None,
    ) -> bool:
        """A claimed run's end; False if it is no longer this node's (rescued).
        ``took``: seconds from its process's start to ``now`` (its start is then
        exact, not the moment this node heard of it)."""
        rows = self._session.query(
            "UPDATE runs SET outcome = %s, finished_at = %s, exit_code = %s, error = %s, "
            "output = %s, started_at = coalesce(%s, started_at) "
            "WHERE id = %s AND node = %s AND outcome IS NULL RETURNING id",
            (
                outcome.value,
                codec.to_us(now),
                result.exit_code,
                None if result.error is None else pg_text(result.error),
                pg_text(cap_output(result.output)),
                None if took is None else codec.to_us(now) - int(took * 1e6),
                run_id,
                self.node,
            ),
        )
        return bool(rows)

    def called_off(self, run_ids: Sequence[int]) -> list[int]:
        """Which of these runs should stop: their task was cancelled or deleted (its
        runs went with it)."""
        if not run_ids:
            return []
        rows = self._session.query(
            "SELECT g.id FROM unnest(%s::bigint[]) AS g(id) WHERE NOT EXISTS ("
            "SELECT 1 FROM runs r JOIN tasks t ON t.id = r.task_id "
            "WHERE r.id = g.id AND t.state <> 'cancelled')",
            (list(run_ids),),
        )
        return [int(row[0]) for row in rows]

    # ------------------------------------------------------------- leader

    def capacity(self, dead_after: timedelta) -> int:
        """Free workers on the nodes that answer, less the runs open (claimed, or free
        for any node: a run pinned to a node that is away, or waiting for a machine
        that meets its conditions, waits without a worker)."""
        rows = self._session.query(
            "SELECT (SELECT coalesce(sum(workers), 0) FROM nodes WHERE stopped_at IS NULL "
            "AND last_heartbeat > clock_timestamp() - %s) - "
            "(SELECT count(*) FROM runs WHERE outcome IS NULL AND (node IS NOT NULL "
            "OR (on_node IS NULL AND on_tag IS NULL AND needs IS NULL "
            "AND needs_idle_s IS NULL)))",
            (dead_after,),
        )
        return max(0, int(rows[0][0]))

    def carried_on(self) -> dict[TaskId, list[CarriedRun]]:
        """For each task stored as running: its open runs and its latest run, oldest
        first (what a new leader needs to carry on; see ``Engine.load``)."""
        rows = self._session.query(
            "SELECT r.id, r.task_id, r.attempt, r.kind, r.scheduled_at, "
            "coalesce(r.started_at, r.scheduled_at), r.outcome, r.finished_at FROM runs r "
            "JOIN tasks t ON t.id = r.task_id WHERE t.state = 'running' AND r.missed IS NULL "
            "AND (r.outcome IS NULL OR r.id = (SELECT max(id) FROM runs l "
            "WHERE l.task_id = t.id AND l.missed IS NULL)) ORDER BY r.id"
        )
        carried: dict[TaskId, list[CarriedRun]] = {}
        for row in rows:
            carried.setdefault(int(row[1]), []).append(
                CarriedRun(
                    ref=int(row[0]),
                    attempt=int(row[2]),
                    kind=SlotKind(row[3]),
                    scheduled_at=codec.from_us(row[4]),
                    dispatched_at=codec.from_us(row[5]),
                    outcome=RunOutcome(row[6]) if row[6] else None,
                    finished_at=None if row[7] is None else codec.from_us(row[7]),
                )
            )
        return carried

    def ended(self, run_ids: Sequence[int]) -> list[tuple[int, RunOutcome, datetime, RunResult]]:
        """Which of these runs ended (on whichever node), how and when, and what the
        node that ran it recorded (its exit status and error; the output is left in
        the row: only the log and the notifications read this)."""
        if not run_ids:
            return []
        rows = self._session.query(
            "SELECT id, outcome, coalesce(finished_at, started_at), exit_code, error "
            "FROM runs WHERE id = ANY(%s) AND outcome IS NOT NULL ORDER BY id",
            (list(run_ids),),
        )
        return [
            (
                int(row[0]),
                RunOutcome(row[1]),
                codec.from_us(row[2]),
                RunResult(exit_code=None if row[3] is None else int(row[3]), error=row[4]),
            )
            for row in rows
        ]

    def idle_wanted(self) -> float | None:
        """The shortest idle time (seconds) a run waiting for a claim needs; None when
        none waits for the user to be idle (then nobody need read the idle time)."""
        rows = self._session.query(
            "SELECT min(needs_idle_s) FROM runs WHERE outcome IS NULL AND node IS NULL "
            "AND needs_idle_s IS NOT NULL"
        )
        return None if rows[0][0] is None else float(rows[0][0])

    def tasks_after(self, task_id: TaskId) -> list[TaskSnapshot]:
        """Tasks added since ``task_id`` (ids only grow), unreadable ones left out."""
        rows = self._session.query(
            f"{SELECT_TASKS} WHERE id > %s AND {NOT_QUARANTINED} ORDER BY id", (task_id,)
        )
        decoder = codec.RowDecoder()
        tasks: list[TaskSnapshot] = []
        for row in rows:
            try:
                tasks.append(decoder.snapshot(row))
            except CodecError:
                continue  # the leader's next load quarantines it
        return tasks
