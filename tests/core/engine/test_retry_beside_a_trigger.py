"""A run fails while a run its upstream asked for waits behind it (an outsider's trial).

The retry took the task's slot without taking the triggered one out of its queue: the
task sat in two queues, and its next dispatch failed inside the engine ("2 is already in
the heap"), losing the ending run's result and the task's schedule until a restart. Now
the trigger coalesces into the retry, as a trigger that comes while a retry is queued
does.
"""

from __future__ import annotations

import random
from datetime import timedelta

import pytest

from taskgui.core.dependencies import After, Upstream
from taskgui.core.engine.engine import Engine
from taskgui.core.events import RunDispatched
from taskgui.core.recurrence import Every
from taskgui.core.states import OverlapPolicy, RunOutcome, SlotKind
from tests.helpers.factories import at, fixed_retry, make_spec
from tests.helpers.schedule_sim import ServiceLoop


def _runs(events: list) -> list:  # type: ignore[type-arg]
    return [e.run for e in events if isinstance(e, RunDispatched)]


@pytest.mark.parametrize("overlap", [OverlapPolicy.QUEUE, OverlapPolicy.SKIP])
def test_a_retry_takes_the_place_of_a_trigger_waiting_behind_the_run(
    overlap: OverlapPolicy,
) -> None:
    upstream = make_spec(1, recurrence=Every(timedelta(seconds=10)))
    follower = make_spec(
        2,
        recurrence=Every(timedelta(minutes=1)),
        overlap=overlap,
        retry=fixed_retry(max_attempts=3, delay=5),
        after=(Upstream(1, After.FINISHED),),
    )
    engine = Engine()
    engine.add(upstream)
    engine.add(follower)
    first, second = sorted(_runs(engine.due(at(0), 2)), key=lambda run: run.task_id)
    events = engine.finished(first.run_id, RunOutcome.SUCCEEDED, at(2))  # triggers 2
    events += engine.due(at(2), 2)
    assert [run.task_id for run in _runs(events)] == []  # 2 runs; 1's next is at 00:10

    engine.finished(second.run_id, RunOutcome.FAILED, at(3))
    retry = [run for run in _runs(engine.due(at(8), 2)) if run.task_id == 2]
    assert [(run.kind, run.attempt) for run in retry] == [(SlotKind.RETRY, 2)]
    engine.finished(retry[0].run_id, RunOutcome.SUCCEEDED, at(9))
    assert engine.snapshot(2).status.next_run_at == at(60)  # its own schedule goes on


@pytest.mark.parametrize("seed", range(6))
def test_runs_after_a_retrying_upstream_never_break_the_engine(seed: int) -> None:
    """The trial's shape on the simulated service loop: no internal error for two
    simulated minutes, whatever fails."""
    upstream = make_spec(1, recurrence=Every(timedelta(seconds=2)), overlap=OverlapPolicy.QUEUE)
    follower = make_spec(
        2,
        recurrence=Every(timedelta(seconds=4)),
        overlap=OverlapPolicy.QUEUE,
        retry=fixed_retry(max_attempts=3, delay=1),
        after=(Upstream(1, After.FINISHED),),
    )
    loop = ServiceLoop(
        Engine(), workers=4, rng=random.Random(seed), durations=(3.0, 5.0), failure_rate=0.7
    )
    loop.act(loop.engine.add(upstream))
    loop.act(loop.engine.add(follower))
    loop.let_pass(120)
    assert loop.ledger.ran[2]  # it went on running
