"""The cluster's SQL on a real server: lease and fencing token judged on the database's
clock, one dispatch per run key, claims shared with SKIP LOCKED, keys across nodes,
rescue of a silent node's runs, and the node registry.

Time passing is the database's: a lease "runs out" here by moving ``expires_at`` (or a
heartbeat) into the past with SQL, so no test sleeps for a lease.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest

from taskgui.core.states import RunOutcome, SlotKind
from taskgui.store import codec
from taskgui.store.postgres.cluster import Cluster, Dispatch
from taskgui.store.postgres.repository import PostgresRepository
from tests.helpers.factories import T0, at, make_spec
from tests.helpers.postgres import PostgresServer

LEASE = timedelta(seconds=30)
DEAD_AFTER = timedelta(seconds=10)


@pytest.fixture
def nodes(repositories: list[PostgresRepository]) -> list[Cluster]:
    return [Cluster(r.session, name) for r, name in zip(repositories, "abc", strict=True)]


def _sql(postgres: PostgresServer, schema: str, statement: str) -> list[tuple[Any, ...]]:
    return postgres.query_in(schema, statement)


def _expire_lease(postgres: PostgresServer, schema: str) -> None:
    _sql(postgres, schema, "UPDATE leadership SET expires_at = clock_timestamp() - interval '1 ms'")


def _occurrence(task_id: int, second: int, attempt: int = 1, **extra: object) -> Dispatch:
    return Dispatch(
        task_id=task_id,
        kind=SlotKind.OCCURRENCE,
        scheduled_at=at(second),
        attempt=attempt,
        **extra,  # type: ignore[arg-type]
    )


def _beat(node: Cluster, offset: timedelta = timedelta(0)) -> float:
    from datetime import UTC, datetime  # noqa: PLC0415

    return node.heartbeat(
        host="host", pid=1, version="t", node_now=datetime.now(UTC) + offset, workers=2
    )


# ------------------------------------------------------------------- lease


def test_one_node_leads_and_a_renewal_keeps_its_epoch(nodes: list[Cluster]) -> None:
    a, b, _ = nodes
    first = a.lead(LEASE)
    assert first is not None and first.epoch == 1
    assert b.lead(LEASE) is None
    again = a.lead(LEASE)
    assert again is not None and again.epoch == 1 and again.expires_at >= first.expires_at
    assert b.leader() == ("a", 1)


def test_a_lease_that_ran_out_passes_to_another_node_with_a_new_epoch(
    postgres: PostgresServer, schema: str, nodes: list[Cluster]
) -> None:
    a, b, _ = nodes
    assert a.lead(LEASE) is not None
    _expire_lease(postgres, schema)
    assert a.leader() == (None, 1)
    taken = b.lead(LEASE)
    assert taken is not None and taken.epoch == 2
    assert a.lead(LEASE) is None  # the old leader cannot renew a lease it lost


def test_a_clean_stop_hands_the_lead_over_at_once(nodes: list[Cluster]) -> None:
    a, b, _ = nodes
    _beat(a)
    assert a.lead(LEASE) is not None
    a.stopped()
    taken = b.lead(LEASE)
    assert taken is not None and taken.epoch == 2


# ------------------------------------------------------------------ fencing


def test_a_leader_that_lost_its_lease_dispatches_nothing(
    postgres: PostgresServer,
    schema: str,
    nodes: list[Cluster],
    repositories: list[PostgresRepository],
) -> None:
    [spec] = repositories[0].add_tasks([make_spec(0)], T0)
    a, b, _ = nodes
    lease = a.lead(LEASE)
    assert lease is not None
    assert a.dispatch(lease.epoch, [_occurrence(spec.id, 0)], T0) is not None
    _expire_lease(postgres, schema)  # a was paused (SIGSTOP, a closed lid) past its lease
    assert a.dispatch(lease.epoch, [_occurrence(spec.id, 10)], T0) is None
    new = b.lead(LEASE)
    assert new is not None
    assert a.dispatch(lease.epoch, [_occurrence(spec.id, 20)], T0) is None  # stale epoch
    assert _sql(postgres, schema, "SELECT scheduled_at, epoch FROM runs") == [
        (codec.to_us(at(0)), 1)
    ]


def test_an_occurrence_is_dispatched_once_whoever_dispatches_it_again(
    postgres: PostgresServer,
    schema: str,
    nodes: list[Cluster],
    repositories: list[PostgresRepository],
) -> None:
    [spec] = repositories[0].add_tasks([make_spec(0)], T0)
    a, b, _ = nodes
    lease = a.lead(LEASE)
    assert lease is not None
    assert a.dispatch(lease.epoch, [_occurrence(spec.id, 0)], T0) == [1]
    assert a.dispatch(lease.epoch, [_occurrence(spec.id, 0)], T0) == []  # same leader again
    _expire_lease(postgres, schema)
    new = b.lead(LEASE)
    assert new is not None
    assert b.dispatch(new.epoch, [_occurrence(spec.id, 0), _occurrence(spec.id, 0, 2)], T0)
    rows = _sql(postgres, schema, "SELECT attempt, epoch FROM runs ORDER BY id")
    assert rows == [(1, 1), (2, 2)]  # the retry is a run of its own; the first one once


def test_racing_leaders_never_commit_an_occurrence_twice(
    postgres: PostgresServer,
    schema: str,
    nodes: list[Cluster],
    repositories: list[PostgresRepository],
) -> None:
    """The lease changes hands while the old leader dispatches: every occurrence once."""
    specs = repositories[0].add_tasks([make_spec(0) for _ in range(10)], T0)
    a, b, _ = nodes
    lease_a = a.lead(LEASE)
    assert lease_a is not None
    wanted = [_occurrence(spec.id, second) for spec in specs for second in range(0, 200, 10)]
    start = threading.Barrier(2)
    counts: dict[str, int] = {}

    def dispatch_as(node: Cluster, epoch_of: Callable[[], int]) -> None:
        start.wait(timeout=10)
        dispatched = 0
        for run in wanted:
            epoch = epoch_of()
            ids = node.dispatch(epoch, [run], T0) if epoch else None
            dispatched += len(ids or [])
        counts[node.node] = dispatched

    def b_epoch() -> int:
        lease = b.lead(LEASE)
        return 0 if lease is None else lease.epoch

    thread = threading.Thread(target=dispatch_as, args=(b, b_epoch))
    thread.start()
    _expire_lease(postgres, schema)  # b takes over while a goes on with its old epoch
    dispatch_as(a, lambda: lease_a.epoch)
    thread.join(timeout=60)
    [(total, distinct)] = _sql(
        postgres, schema, "SELECT count(*), count(DISTINCT (task_id, scheduled_at)) FROM runs"
    )
    assert total == distinct == counts["a"] + counts["b"]
    assert counts["b"] > 0


# -------------------------------------------------------------------- claim


def test_claims_take_the_highest_priority_first_and_never_the_same_run(
    nodes: list[Cluster], repositories: list[PostgresRepository]
) -> None:
    specs = repositories[0].add_tasks([make_spec(0) for _ in range(30)], T0)
    a, b, c = nodes
    lease = a.lead(LEASE)
    assert lease is not None
    runs = [_occurrence(spec.id, 0, priority=index % 5) for index, spec in enumerate(specs)]
    assert a.dispatch(lease.epoch, runs, T0) is not None
    top = b.claim(6)
    assert len(top) == 6
    priorities = {spec.id: index % 5 for index, spec in enumerate(specs)}
    assert {priorities[run.task_id] for run in top} == {4}
    claimed: list[list[int]] = []

    def claim_all(node: Cluster) -> None:
        mine: list[int] = []
        while batch := node.claim(3):
            mine += [run.run_id for run in batch]
        claimed.append(mine)

    threads = [threading.Thread(target=claim_all, args=(node,)) for node in (a, b, c)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    every = [run_id for mine in claimed for run_id in mine] + [run.run_id for run in top]
    assert len(every) == len(set(every)) == 30


def test_a_concurrency_key_holds_across_nodes(
    nodes: list[Cluster], repositories: list[PostgresRepository]
) -> None:
    specs = repositories[0].add_tasks([make_spec(0) for _ in range(3)], T0)
    a, b, c = nodes
    lease = a.lead(LEASE)
    assert lease is not None
    runs = [_occurrence(spec.id, 0, concurrency_key="backup-disk") for spec in specs]
    assert a.dispatch(lease.epoch, runs, T0) is not None
    [first] = b.claim(5)
    assert c.claim(5) == [] and a.claim(5) == []  # the key is busy on b
    assert b.finish(first.run_id, RunOutcome.SUCCEEDED, T0)
    assert len(c.claim(5)) == 1


# ------------------------------------------------------------------- rescue


def test_a_silent_nodes_runs_are_rescued_and_named(
    postgres: PostgresServer,
    schema: str,
    nodes: list[Cluster],
    repositories: list[PostgresRepository],
) -> None:
    [spec] = repositories[0].add_tasks([make_spec(0)], T0)
    a, b, _ = nodes
    for node in (a, b):
        _beat(node)
    lease = a.lead(LEASE)
    assert lease is not None
    assert a.dispatch(lease.epoch, [_occurrence(spec.id, 0)], T0)
    [run] = b.claim(1)
    assert a.rescue(lease.epoch, DEAD_AFTER, T0) == []  # b still answers
    _sql(
        postgres,
        schema,
        "UPDATE nodes SET last_heartbeat = clock_timestamp() - interval '1 min' WHERE name = 'b'",
    )
    rescued = a.rescue(lease.epoch, DEAD_AFTER, T0)
    assert rescued is not None
    assert [(r.run_id, r.node) for r in rescued] == [(run.run_id, "b")]
    [record] = repositories[0].runs(spec.id)
    assert record.outcome is RunOutcome.INTERRUPTED
    assert record.error is not None
    assert record.error.startswith("rescued from node b, which stopped answering")
    assert not b.finish(run.run_id, RunOutcome.SUCCEEDED, T0)  # b woke up: too late
    assert repositories[0].runs(spec.id)[0].outcome is RunOutcome.INTERRUPTED


def test_a_stale_leader_rescues_nothing(
    postgres: PostgresServer, schema: str, nodes: list[Cluster]
) -> None:
    a, _, _ = nodes
    lease = a.lead(LEASE)
    assert lease is not None
    _expire_lease(postgres, schema)
    assert a.rescue(lease.epoch, DEAD_AFTER, T0) is None


# ----------------------------------------------------------------- registry


def test_nodes_lists_leader_heartbeat_running_and_clock_offset(
    nodes: list[Cluster], repositories: list[PostgresRepository]
) -> None:
    [spec] = repositories[0].add_tasks([make_spec(0)], T0)
    a, b, _ = nodes
    assert abs(_beat(a)) < 1000
    offset = _beat(b, timedelta(seconds=5))
    assert 4000 < offset < 6000  # b's clock is 5 s fast: warned about, never trusted
    lease = a.lead(LEASE)
    assert lease is not None
    assert a.dispatch(lease.epoch, [_occurrence(spec.id, 0)], T0)
    b.claim(1)
    listed = {node.name: node for node in a.nodes(DEAD_AFTER)}
    assert set(listed) == {"a", "b"}
    assert (listed["a"].leader, listed["a"].running, listed["a"].alive) == (True, 0, True)
    assert (listed["b"].leader, listed["b"].running) == (False, 1)
    assert listed["b"].clock_offset_ms > 4000
    a.stopped()
    assert not {node.name: node for node in b.nodes(DEAD_AFTER)}["a"].alive


def test_a_leader_paused_inside_a_dispatch_does_not_block_the_next_leader(
    nodes: list[Cluster], repositories: list[PostgresRepository]
) -> None:
    """A closed lid or SIGSTOP can catch the leader between its fencing read (which
    locks the leadership row FOR SHARE) and its commit. The server must end that idle
    transaction within the lease, or no other node could take the lead until it woke."""
    a, b = nodes[0], nodes[1]
    lease = timedelta(milliseconds=400)
    first = a.lead(lease)
    assert first is not None
    paused = repositories[0].session.connection()
    paused.execute("BEGIN")
    paused.execute(
        "SELECT 1 FROM leadership WHERE id = 1 AND node = %s AND epoch = %s FOR SHARE",
        (a.node, first.epoch),
    )  # ... and the leader stops here, its transaction open

    taken: list[object] = []
    worker = threading.Thread(target=lambda: taken.append(_take_lead(b, lease)), daemon=True)
    worker.start()
    worker.join(timeout=10)

    assert not worker.is_alive(), "the next leader was blocked by the paused one"
    assert taken and taken[0] is not None
    with pytest.raises(Exception):  # noqa: B017  (the server ended its transaction)
        paused.execute("COMMIT")


def _take_lead(node: Cluster, lease: timedelta) -> object:
    """Try for the lead until the old lease runs out (a few ticks, as a node would)."""
    import time  # noqa: PLC0415

    for _ in range(50):
        lead = node.lead(lease)
        if lead is not None:
            return lead
        time.sleep(0.05)
    return None


# ------------------------------------------------------- a single process's start


def test_a_single_process_start_leaves_the_shared_schedules_runs_alone(
    nodes: list[Cluster], repositories: list[PostgresRepository]
) -> None:
    """``interrupt_open_runs`` (``control.recovery``, a single process's start) closes
    only runs no node holds and no leader dispatched: another node's run in progress
    and a dispatched run waiting for a claim go on."""
    claimed, waiting = repositories[0].add_tasks([make_spec(0), make_spec(0)], T0)
    a, b, _ = nodes
    lease = a.lead(LEASE)
    assert lease is not None
    assert a.dispatch(lease.epoch, [_occurrence(claimed.id, 0, priority=5)], T0)
    [run] = b.claim(1)
    assert a.dispatch(lease.epoch, [_occurrence(waiting.id, 0)], T0)

    assert repositories[2].interrupt_open_runs(at(9)) == []

    assert [r.outcome for r in repositories[2].runs(claimed.id)] == [None]
    assert [r.outcome for r in repositories[2].runs(waiting.id)] == [None]
    assert b.finish(run.run_id, RunOutcome.SUCCEEDED, at(1))  # still b's to finish
