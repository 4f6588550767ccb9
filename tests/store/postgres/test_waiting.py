"""Why a shared schedule's dispatched run waits, judged in SQL from what each node
publishes of its machine, against the engine's own judgement (``RunConditions.unmet``)
on the same readings; and the leader's give-up, fenced and never over a claim."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest

from taskgui.core.conditions import RunConditions, SystemConditions
from taskgui.core.states import SlotKind, WaitReason
from taskgui.store.postgres import waiting
from taskgui.store.postgres.cluster import Cluster, Dispatch
from taskgui.store.postgres.placement import placement_of
from taskgui.store.postgres.repository import PostgresRepository
from tests.helpers.factories import at, make_spec
from tests.helpers.postgres import PostgresServer
from tests.store.postgres.test_placement import CONDITIONS, READINGS

LEASE = timedelta(seconds=30)


@pytest.fixture
def repository(postgres: PostgresServer) -> Iterator[PostgresRepository]:
    opened = PostgresRepository(postgres.dsn, schema=postgres.new_schema())
    yield opened
    opened.close()


def _node(repository: PostgresRepository, name: str, system: SystemConditions | None) -> Cluster:
    node = Cluster(repository.session, name)
    node.heartbeat(host="h", pid=1, version="t", node_now=datetime.now(UTC), workers=1)
    waiting.publish(repository.session, name, system)
    return node


def _dispatch(repository: PostgresRepository, conditions: RunConditions, **pin: str) -> int:
    """A task with these conditions (and pin), its run dispatched by leader "lead"."""
    [spec] = repository.add_tasks([make_spec(0, conditions=conditions, **pin)], at(0))
    lead = Cluster(repository.session, "lead")
    lease = lead.lead(LEASE)
    assert lease is not None
    run = Dispatch(task_id=spec.id, kind=SlotKind.OCCURRENCE, scheduled_at=at(0), attempt=1)
    [run_id] = lead.dispatch(lease.epoch, [run], at(0)) or []
    placement = placement_of(spec)
    values = (None, None, None, None) if placement is None else placement.values
    repository.session.execute(
        "UPDATE runs SET on_node = %s, on_tag = %s, needs = %s, needs_idle_s = %s WHERE id = %s",
        (*values, run_id),
    )
    return spec.id


def _expected(conditions: RunConditions, system: SystemConditions) -> WaitReason:
    unmet = conditions.unmet(system)
    if unmet is None:
        return WaitReason.NODE
    return WaitReason(unmet.condition.value) if unmet.checkable else WaitReason.UNCHECKABLE


def test_a_node_that_publishes_the_same_offers_again_tells_nobody(
    repository: PostgresRepository, postgres: PostgresServer
) -> None:
    on_ac = SystemConditions(on_battery=False)
    _node(repository, "a", on_ac)
    listener = PostgresRepository(postgres.dsn, schema=repository.schema)
    try:
        listener.changed()
        listener.changed_tables()
        waiting.publish(repository.session, "a", on_ac)  # the same reading
        waiting.publish(repository.session, "b", on_ac)  # a node that never joined
        assert not _heard(listener, "nodes", within=0.5)
        waiting.publish(repository.session, "a", SystemConditions(on_battery=True))
        assert _heard(listener, "nodes", within=10)
    finally:
        listener.close()


def _heard(listener: PostgresRepository, table: str, *, within: float) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        listener.changed()
        if table in listener.changed_tables():
            return True
        time.sleep(0.02)
    return False


@pytest.mark.parametrize("system", READINGS)
@pytest.mark.parametrize("conditions", CONDITIONS)
def test_the_reason_a_run_waits_is_the_engine_s_on_the_one_node(
    repository: PostgresRepository, system: SystemConditions, conditions: RunConditions
) -> None:
    _node(repository, "only", system)
    task_id = _dispatch(repository, conditions)
    assert waiting.unclaimed_waits(repository.session)[task_id].reason is _expected(
        conditions, system
    )
    unmet = conditions.unmet(system) is not None
    assert bool(waiting.unmet_runs(repository.session, timedelta(seconds=10))) is unmet


def test_a_run_waits_for_a_node_when_any_machine_meets_it_and_for_the_pinned_one(
    repository: PostgresRepository,
) -> None:
    _node(repository, "battery", SystemConditions(on_battery=True, online=True))
    _node(repository, "cannot tell", SystemConditions())
    needs_power = _dispatch(repository, RunConditions(ac_power=True))
    waits = waiting.unclaimed_waits(repository.session)
    assert waits[needs_power].reason is WaitReason.AC_POWER  # one node knows it is on battery
    _node(repository, "plugged", SystemConditions(on_battery=False, online=True))
    pinned = _dispatch(repository, RunConditions(), on_node="away")
    waits = waiting.unclaimed_waits(repository.session)
    assert waits[needs_power].reason is WaitReason.NODE  # "plugged" could take it
    assert waits[pinned].reason is WaitReason.NO_NODE  # "away" does not answer
    assert waiting.unmet_runs(repository.session, timedelta(seconds=10)) == []


def test_a_run_each_machine_fails_another_condition_of_waits_for_them_all(
    repository: PostgresRepository,
) -> None:
    _node(repository, "battery", SystemConditions(on_battery=True, online=True))
    _node(repository, "offline", SystemConditions(on_battery=False, online=False))
    both = _dispatch(repository, RunConditions(ac_power=True, network=True))
    power = _dispatch(repository, RunConditions(ac_power=True))
    waits = waiting.unclaimed_waits(repository.session)
    # Neither "on battery" nor "offline" is true of both machines: no one is named.
    assert waits[both].reason is WaitReason.CONDITIONS_SPLIT
    assert waits[power].reason is WaitReason.NODE  # "offline" meets it
    assert [r.task_id for r in waiting.unmet_runs(repository.session, LEASE)] == [both]


def test_a_run_for_a_tag_waits_for_a_node_only_when_one_that_answers_has_it(
    repository: PostgresRepository,
) -> None:
    plain = _node(repository, "plain", SystemConditions())
    tagged = _dispatch(repository, RunConditions(), on_tag="disk")
    anywhere = _dispatch(repository, RunConditions())
    waits = waiting.unclaimed_waits(repository.session)
    assert waits[tagged].reason is WaitReason.NO_NODE  # no node has the tag
    assert waits[anywhere].reason is WaitReason.NODE  # "plain" may take it when free
    disk = Cluster(repository.session, "disk box", ["disk"])
    disk.heartbeat(host="h", pid=2, version="t", node_now=datetime.now(UTC), workers=1)
    assert waiting.unclaimed_waits(repository.session)[tagged].reason is WaitReason.NODE
    assert [n.tags for n in plain.nodes(timedelta(seconds=10))] == [("disk",), ()]


def test_the_give_up_is_fenced_and_leaves_a_claimed_run_alone(
    repository: PostgresRepository,
) -> None:
    _node(repository, "battery", SystemConditions(on_battery=True))
    first = _dispatch(repository, RunConditions(ac_power=True))
    second = _dispatch(repository, RunConditions(ac_power=True))
    rows = {r.task_id: r.run_id for r in waiting.unmet_runs(repository.session, LEASE)}
    lead = Cluster(repository.session, "lead")
    lease = lead.lead(LEASE)
    assert lease is not None
    stale = waiting.give_up(
        repository.session, node="lead", epoch=lease.epoch - 1, run_ids=list(rows.values()),
        now=at(10),
    )  # fmt: skip
    assert stale == []  # an old epoch writes nothing
    repository.session.execute("UPDATE runs SET node = 'battery' WHERE id = %s", (rows[second],))
    closed = waiting.give_up(
        repository.session, node="lead", epoch=lease.epoch, run_ids=list(rows.values()),
        now=at(10),
    )  # fmt: skip
    assert closed == [rows[first]]
    outcome = repository.session.query(
        "SELECT task_id, outcome, error, started_at IS NULL FROM runs ORDER BY task_id"
    )
    # The given-up run never started: no start is recorded (the claimed one keeps its own).
    assert outcome == [(first, "missed", waiting.GAVE_UP, True), (second, None, None, False)]
