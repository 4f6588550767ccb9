"""The leader reads again only what a write could have changed (runtime.cluster.stale_reads).

The rules alone, then a real leader on a real server: with nothing heard it sends no
read of requests, added tasks or ended runs; a task another process adds, a request it
submits and the end of a run it records each reach the engine once the change feed
names their table.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg
import pytest

from taskgui.core.clock import SystemClock
from taskgui.core.operation import Op
from taskgui.core.states import RunOutcome
from taskgui.core.status import RunResult
from taskgui.runtime.cluster.leader import Leader
from taskgui.runtime.cluster.node import NodeLoop
from taskgui.runtime.cluster.stale_reads import Read, StaleReads
from taskgui.store.postgres.cluster import Cluster, Lease
from taskgui.store.postgres.feed import EVERY_TABLE
from taskgui.store.postgres.repository import PostgresRepository
from taskgui.store.postgres.shared_runs import SharedRuns
from tests.helpers.factories import make_spec
from tests.helpers.postgres import PostgresServer
from tests.helpers.shared_nodes import wait_for

DEAD_AFTER = timedelta(seconds=10)


def stale(reads: StaleReads) -> set[Read]:
    return {read for read in Read if reads.take(read)}


def test_each_table_makes_only_its_reads_stale() -> None:
    reads = StaleReads()
    assert stale(reads) == set(Read)  # at first: everything
    assert stale(reads) == set()  # taken: nothing until a change is heard
    reads.heard(["tasks"])
    assert stale(reads) == {Read.ADDED}
    reads.heard(["requests", "requests"])
    assert stale(reads) == {Read.REQUESTS}
    reads.heard(["runs"])
    assert stale(reads) == {Read.ENDED, Read.WAITING_TAKEN}
    reads.heard(["nodes"])
    assert stale(reads) == {Read.WAITING}
    reads.heard(["a table added later"])  # unknown: nothing is assumed
    assert stale(reads) == set(Read)
    reads.heard([EVERY_TABLE])
    assert stale(reads) == set(Read)
    reads.mark(Read.ENDED)
    reads.heard([])
    assert stale(reads) == {Read.ENDED}
    reads.everything()
    assert stale(reads) == set(Read)


class Statements:
    """Counts the SQL statements this process sends, by their first words."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.sent: list[str] = []
        execute = psycopg.Cursor.execute

        def counted(cursor: Any, query: Any, *args: Any, **kwargs: Any) -> Any:
            self.sent.append(" ".join(str(query).split()))
            return execute(cursor, query, *args, **kwargs)

        monkeypatch.setattr(psycopg.Cursor, "execute", counted)

    def reads_of(self, table: str) -> int:
        """The SELECTs sent whose text has ``FROM {table}`` (a table and what follows)."""
        return sum(1 for text in self.sent if text.startswith("SELECT") and f"FROM {table}" in text)


@pytest.fixture
def pair(postgres: PostgresServer) -> Iterator[tuple[PostgresRepository, PostgresRepository]]:
    """The leader's repository and another process's (the CLI's, another node's)."""
    schema = postgres.new_schema()
    leading = PostgresRepository(postgres.dsn, schema=schema)
    other = PostgresRepository(postgres.dsn, schema=schema, listen=False)
    yield leading, other
    other.close()
    leading.close()


def heard(repository: PostgresRepository, leader: Leader, table: str) -> None:
    """Wait until the change feed has a notice of ``table`` from another process."""
    names: set[str] = set()

    def arrived() -> bool:
        repository.changed()
        names.update(repository.changed_tables())
        return table in names

    wait_for(arrived, 10)
    leader.stale.heard(names)


def test_a_leader_reads_again_only_what_others_wrote(
    pair: tuple[PostgresRepository, PostgresRepository], monkeypatch: pytest.MonkeyPatch
) -> None:
    leading, other = pair
    now = datetime.now(UTC)
    cluster = Cluster(leading.session, "a")
    loop = NodeLoop(cluster, SystemClock(), version="t", workers=2)
    lease = loop.step()
    assert isinstance(lease, Lease)
    runs = SharedRuns(leading.session, "a")
    leader = Leader(leading, runs, dead_after=DEAD_AFTER)
    far = now + timedelta(days=1)
    [first] = other.add_tasks([make_spec(0, first_run_at=far)], now)
    leader.work(lease, now)  # takes over: reads everything
    assert leader.engine is not None and first.id in leader.engine
    assert leader.perform_requests(lease, now) is False  # read once: none open
    leading.changed()
    leading.changed_tables()  # what the take-over read already

    statements = Statements(monkeypatch)
    assert leader.perform_requests(lease, now) is False
    leader.work(lease, now)
    assert statements.reads_of("requests") == 0
    assert statements.reads_of("tasks") == 0  # no task added: none read
    assert statements.reads_of("runs r WHERE r.outcome IS NULL AND r.node IS NULL") == 0

    # A task another process adds reaches the engine once the feed names "tasks".
    [second] = other.add_tasks([make_spec(0, first_run_at=now - timedelta(seconds=1))], now)
    heard(leading, leader, "tasks")
    leader.work(lease, datetime.now(UTC))
    assert second.id in leader.engine
    [(row_id,)] = other.session.query("SELECT id FROM runs WHERE task_id = %s", (second.id,))

    # Its run ends on another node: read back once "runs" is heard, and the task is done.
    other.session.query(
        "UPDATE runs SET node = 'b', outcome = %s, finished_at = %s WHERE id = %s",
        (RunOutcome.SUCCEEDED.value, int(datetime.now(UTC).timestamp() * 1e6), row_id),
    )
    heard(leading, leader, "runs")
    leader.work(lease, datetime.now(UTC))
    assert leader.engine.snapshot(second.id).state.value == "succeeded"

    # A request: performed once the feed names "requests".
    other.submit_request(Op.CANCEL.value, first.id, None, datetime.now(UTC))
    heard(leading, leader, "requests")
    assert leader.perform_requests(lease, datetime.now(UTC)) is True
    assert leader.engine.snapshot(first.id).state.value == "cancelled"


def test_a_run_ended_on_the_leaders_own_session_is_read_once_marked(
    pair: tuple[PostgresRepository, PostgresRepository], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The feed leaves out this node's own writes: its claimer's end of a run reaches
    the leader only through ``mark(Read.ENDED)`` (the service's ``run_ended`` slot)."""
    leading, other = pair
    now = datetime.now(UTC)
    cluster = Cluster(leading.session, "a")
    lease = NodeLoop(cluster, SystemClock(), version="t", workers=2).step()
    assert isinstance(lease, Lease)
    runs = SharedRuns(leading.session, "a")
    leader = Leader(leading, runs, dead_after=DEAD_AFTER)
    [task] = other.add_tasks([make_spec(0, first_run_at=now - timedelta(seconds=1))], now)
    leader.work(lease, now)  # takes over and dispatches it
    assert leader.engine is not None
    assert leader.engine.snapshot(task.id).state.value == "running"
    [claimed] = cluster.claim(1)  # this node's claimer, on the leader's own session
    assert runs.finish(claimed.run_id, RunOutcome.SUCCEEDED, datetime.now(UTC), RunResult())
    statements = Statements(monkeypatch)
    leader.work(lease, datetime.now(UTC))
    assert statements.reads_of("runs WHERE id = ANY") == 0  # nothing told it: not read
    assert leader.engine.snapshot(task.id).state.value == "running"
    leader.stale.mark(Read.ENDED)
    leader.work(lease, datetime.now(UTC))
    assert statements.reads_of("runs WHERE id = ANY") == 1
    assert leader.engine.snapshot(task.id).state.value == "succeeded"
