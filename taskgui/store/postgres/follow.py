"""A shared schedule as a window follows it: only what changed, and who runs it.

A window attached to a PostgreSQL schedule is told by LISTEN that something was
committed, never what, just as a window following ``taskgui daemon`` on a file is.
These are the same incremental reads (``FollowedStore``: the task rows compared with
the ones it saw last, only those that differ decoded; of the runs only each task's
latest finished id until one is new), written once in ``store.sqlite.follow`` over a
query function and run here on the server, plus what only a shared schedule has:
which node leads (the "holder"), which node runs each run in progress, the nodes.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import replace
from typing import Any

from taskgui.core.nodes import SILENT_AFTER, NodeInfo
from taskgui.core.status import RunRecord, TaskSnapshot
from taskgui.core.task import TaskId
from taskgui.store import codec
from taskgui.store.postgres.cluster import Cluster
from taskgui.store.postgres.repository import PostgresRepository
from taskgui.store.postgres.waiting import UNCLAIMED_WAITS, as_waiting, unclaimed_wait
from taskgui.store.protocols import DEFAULT_HISTORY_LIMIT, ScheduleHolder, TaskChanges
from taskgui.store.run_rows import SHARED_RUN_COLUMNS, run_record
from taskgui.store.sqlite import follow as rows
from taskgui.store.times import from_us

# The task rows as stored, their wait reason, and their runs in progress: how many,
# since when, on which nodes (in the row, so a run a node claims or starts is news
# even when the task's row is the same; the leader's engine stores the dispatch, the
# node that claims a run its start); and, for a task whose dispatched runs no node has
# taken, why they wait (``store.postgres.waiting``: the nodes' offers are in the row
# too, so a node plugged in is news to the waiting task's row).
_SELECT_MARKED = (
    f"SELECT {', '.join(f't.{c}' for c in codec.TASK_COLUMNS)}, t.waiting, o.open, o.since, "
    "o.nodes, u.reason, u.kind, u.at FROM tasks t LEFT JOIN (SELECT task_id, count(*) AS open, "
    # Since the first claimed one started: an unclaimed run's start is its dispatch.
    "min(started_at) FILTER (WHERE node IS NOT NULL OR epoch IS NULL) AS since, "
    "array_agg(DISTINCT node ORDER BY node) "
    "FILTER (WHERE node IS NOT NULL) AS nodes FROM runs WHERE outcome IS NULL "
    "GROUP BY task_id) o ON o.task_id = t.id "
    f"LEFT JOIN ({UNCLAIMED_WAITS}) u (task_id, reason, kind, at) ON u.task_id = t.id "
    "WHERE t.id NOT IN (SELECT task_id FROM quarantine) ORDER BY t.id"
)


def _runs_in_progress(snapshot: TaskSnapshot, extra: tuple[Any, ...]) -> TaskSnapshot:
    """Lay a task's runs in progress over its stored status (see ``_SELECT_MARKED``),
    or, when no node has taken them, why they wait."""
    count, since, nodes, reason, kind, at = extra
    wait = unclaimed_wait(reason, kind, at)
    if wait is not None:
        return as_waiting(snapshot, wait)
    if not count:
        return snapshot
    status = snapshot.status
    return snapshot._replace(
        status=status._replace(
            running=max(status.running, int(count)),
            running_since=status.running_since or (from_us(since) if since else None),
            nodes=tuple(nodes or ()),
        )
    )


class FollowedPostgres(PostgresRepository):
    """``FollowableStore`` over a shared schedule (see the module docstring)."""

    def _query(self, statement: str, params: Sequence[Any]) -> list[tuple[Any, ...]]:
        return self.session.query(statement, tuple(params))

    def task_changes(self, marks: Mapping[TaskId, object]) -> TaskChanges:
        return rows.task_changes(self._query, marks, _SELECT_MARKED, _runs_in_progress)

    def last_run_ids(self) -> dict[TaskId, int]:
        return rows.last_run_ids(self._query)

    def runs_by_id(self, run_ids: Collection[int]) -> list[RunRecord]:
        found = self.session.query(
            f"SELECT {SHARED_RUN_COLUMNS}, node FROM runs WHERE id = ANY(%s) ORDER BY id",
            (sorted(run_ids),),
        )
        return [_record(row) for row in found]

    def runs(self, task_id: TaskId, limit: int = DEFAULT_HISTORY_LIMIT) -> list[RunRecord]:
        """A task's history, each run naming its node."""
        found = self.session.query(
            f"SELECT {SHARED_RUN_COLUMNS}, node FROM runs WHERE task_id = %s "
            "ORDER BY id DESC LIMIT %s",
            (task_id, limit),
        )
        return [_record(row) for row in found]

    def schedule_holder(self) -> ScheduleHolder | None:
        """The leading node (its pid is on another machine: not given), or None."""
        return None if self.leader() is None else ScheduleHolder(pid=None)

    def leader(self) -> str | None:
        return Cluster(self.session, "").leader()[0]

    def nodes(self) -> list[NodeInfo]:
        """Every node that joined, as ``taskgui nodes`` lists them."""
        return Cluster(self.session, "").nodes(SILENT_AFTER)


def _record(row: tuple[Any, ...]) -> RunRecord:
    record = run_record(row[:-1])
    return replace(record, node=str(row[-1])) if row[-1] else record
