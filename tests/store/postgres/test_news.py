"""The leader's outbox on a real server (``store.postgres.news``): a fenced decision
writes its news in its own commit, a fenced-off one writes none, and only the leader
claims the rows of a teller that stopped answering, once.
"""

from __future__ import annotations

import os
from datetime import timedelta
from typing import Any

import pytest

from taskgui.core.events import Event, RetryScheduled, RunFinished, TaskChanged, TaskExhausted
from taskgui.core.states import RunOutcome, SlotKind
from taskgui.core.status import RunResult, RunTicket
from taskgui.store.postgres.cluster import Cluster
from taskgui.store.postgres.news import NewsRows, decode, encode
from taskgui.store.postgres.repository import PostgresRepository
from tests.helpers.factories import T0, at, make_spec
from tests.helpers.postgres import PostgresServer

LEASE = timedelta(seconds=30)
DEAD_AFTER = timedelta(seconds=10)
TICKET = RunTicket(
    run_id=7, task_id=1, attempt=2, kind=SlotKind.OCCURRENCE, scheduled_at=T0,
    dispatched_at=at(1),
)  # fmt: skip
ENDED: list[Event] = [
    RunFinished(TICKET, RunOutcome.FAILED, at(3)),
    RetryScheduled(
        task_id=1, attempt=3, max_attempts=4, run_at=at(13), delay=timedelta(seconds=10)
    ),
]
RESULTS = {7: RunResult(exit_code=3, error="exit status 3 \x1b[31m", output="not kept")}


def _sql(postgres: PostgresServer, schema: str, statement: str) -> list[tuple[Any, ...]]:
    return postgres.query_in(schema, statement)


def _join(repository: PostgresRepository, name: str) -> Cluster:
    from datetime import UTC, datetime  # noqa: PLC0415

    node = Cluster(repository.session, name)
    node.heartbeat(host="h", pid=os.getpid(), version="t", node_now=datetime.now(UTC), workers=1)
    return node


def test_the_body_reads_back_as_the_events_and_results_it_was() -> None:
    exhausted = TaskExhausted(task_id=1, name="n\x00'\"", attempts=4, outcome=RunOutcome.FAILED)
    events, results = decode(encode([*ENDED, exhausted], RESULTS))
    assert events == (*ENDED, exhausted)
    assert results == {7: RunResult(exit_code=3, error="exit status 3 \x1b[31m")}
    with pytest.raises(ValueError, match="version"):
        decode('{"v": 99, "events": [], "results": []}')
    with pytest.raises(ValueError, match="unreadable"):
        decode("{not json")


def test_a_fenced_decision_writes_its_news_in_its_commit_and_a_fenced_off_one_none(
    repositories: list[PostgresRepository], postgres: PostgresServer, schema: str
) -> None:
    repository = repositories[0]
    [spec] = repository.add_tasks([make_spec(1)], at(0))
    node = _join(repository, "a")
    lease = node.lead(LEASE)
    assert lease is not None
    snapshot = repository.get(spec.id)
    quiet = repository.apply_fenced([TaskChanged(snapshot)], at(3), node="a", epoch=lease.epoch)
    assert quiet is not None and quiet.news is None  # nothing to tell
    written = repository.apply_fenced(
        [*ENDED, TaskChanged(snapshot)], at(3), node="a", epoch=lease.epoch, results=RESULTS
    )
    assert written is not None and written.news is not None
    assert written.news.events == tuple(ENDED) and not written.news.again
    assert written.news.results == RESULTS  # in memory as given; stored without output
    assert _sql(postgres, schema, "SELECT teller, teller_pid, epoch FROM news") == [
        ("a", os.getpid(), lease.epoch)
    ]
    stale = repository.apply_fenced(ENDED, at(3), node="a", epoch=lease.epoch - 1)
    assert stale is None
    assert _sql(postgres, schema, "SELECT count(*) FROM news") == [(1,)]
    NewsRows(repository.session, "a").told([written.news.id])
    assert _sql(postgres, schema, "SELECT count(*) FROM news") == [(0,)]


def test_only_the_leader_claims_a_silent_tellers_news_and_only_once(
    repositories: list[PostgresRepository], postgres: PostgresServer, schema: str
) -> None:
    first, second, _ = repositories
    [spec] = first.add_tasks([make_spec(1)], at(0))
    a, b = _join(first, "a"), _join(second, "b")
    lease_a = a.lead(LEASE)
    assert lease_a is not None
    written = first.apply_fenced(ENDED, at(3), node="a", epoch=lease_a.epoch, results=RESULTS)
    assert written is not None and written.news is not None
    news_a, news_b = NewsRows(first.session, "a"), NewsRows(second.session, "b")
    assert news_b.orphaned(lease_a.epoch, DEAD_AFTER) is None  # b does not lead
    assert news_a.orphaned(lease_a.epoch, DEAD_AFTER) == []  # its own rows are its own
    _sql(postgres, schema, "UPDATE leadership SET expires_at = clock_timestamp()")
    lease_b = b.lead(LEASE)
    assert lease_b is not None and lease_b.epoch > lease_a.epoch
    assert news_b.orphaned(lease_b.epoch, DEAD_AFTER) == []  # a still answers
    assert news_a.orphaned(lease_a.epoch, DEAD_AFTER) is None  # a no longer leads
    _sql(postgres, schema, "UPDATE nodes SET last_heartbeat = now() - interval '1 hour' "
                           "WHERE name = 'a'")  # fmt: skip
    orphans = news_b.orphaned(lease_b.epoch, DEAD_AFTER)
    assert orphans is not None and len(orphans) == 1
    claimed = orphans[0]
    assert (claimed.id, claimed.again, claimed.teller) == (written.news.id, True, "a")
    assert claimed.events == tuple(ENDED)
    assert claimed.results == {7: RunResult(exit_code=3, error="exit status 3 \x1b[31m")}
    assert news_b.orphaned(lease_b.epoch, DEAD_AFTER) == []  # b tells it now, once
    assert _sql(postgres, schema, "SELECT teller FROM news") == [("b",)]
    assert spec.id == 1


def test_a_new_process_under_a_tellers_name_does_not_own_its_rows(
    repositories: list[PostgresRepository], postgres: PostgresServer, schema: str
) -> None:
    first, second, _ = repositories
    first.add_tasks([make_spec(1)], at(0))
    a, b = _join(first, "a"), _join(second, "b")
    lease_a = a.lead(LEASE)
    assert lease_a is not None
    assert first.apply_fenced(ENDED, at(3), node="a", epoch=lease_a.epoch) is not None
    _sql(postgres, schema, "UPDATE nodes SET pid = pid + 1 WHERE name = 'a'")  # restarted
    _sql(postgres, schema, "UPDATE leadership SET expires_at = clock_timestamp()")
    lease_b = b.lead(LEASE)
    assert lease_b is not None
    claimed = NewsRows(second.session, "b").orphaned(lease_b.epoch, DEAD_AFTER)
    assert claimed is not None and [item.teller for item in claimed] == ["a"]
