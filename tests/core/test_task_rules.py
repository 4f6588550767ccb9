"""core.task_rules: the window's enabled actions and the engine's guards agree.

A random walk drives real engines through every state (due runs, successes and
failures, retries, pauses, cancels, runs that overlap) and, after every step, asks each
rule about each task, from its snapshot as the window does, and then performs the
operation on an engine replayed to that step: a rule that says "allowed" must never
meet an InvalidStateError, and a refusal must be that error or a request that changes
nothing.
"""

from __future__ import annotations

import contextlib
import random
from datetime import timedelta

import pytest

from taskgui.core.engine.engine import Engine
from taskgui.core.errors import InvalidStateError
from taskgui.core.events import Event, RunDispatched
from taskgui.core.recurrence import Every, EveryMode
from taskgui.core.states import OverlapPolicy, RunOutcome, TaskState
from taskgui.core.status import RunId, TaskSnapshot
from taskgui.core.task import TaskSpec
from taskgui.core.task_rules import (
    cancel_refusal,
    pause_refusal,
    resume_refusal,
    retry_refusal,
    run_now_refusal,
)
from tests.helpers.factories import at, fixed_retry, make_spec

OPS = ("run_now", "retry_now", "cancel", "pause", "resume")


def refusal(op: str, task: TaskSnapshot) -> str | None:
    """What the window asks (from a snapshot, as ui.window.actions does)."""
    state, spec = task.state, task.spec
    running = task.status.running > 0  # also a cancelled run still being stopped
    if op == "run_now":
        return run_now_refusal(spec, state, running=running)
    if op == "retry_now":
        return retry_refusal(spec, state, task.status.last_outcome, running=running)
    if op == "cancel":
        return cancel_refusal(spec, state)
    if op == "pause":
        return pause_refusal(spec, state)
    return resume_refusal(spec)


def perform(engine: Engine, op: str, task_id: int, seconds: float) -> list[Event]:
    if op in ("run_now", "retry_now"):
        return getattr(engine, op)(task_id, at(seconds))  # type: ignore[no-any-return]
    return getattr(engine, op)(task_id)  # type: ignore[no-any-return]


def specs() -> list[TaskSpec]:
    every = Every(timedelta(minutes=1), EveryMode.FIXED_RATE)
    return [
        make_spec(1, retry=fixed_retry(max_attempts=2, delay=5)),  # one-off, retried
        make_spec(2, recurrence=every),  # recurring
        make_spec(3, recurrence=every, overlap=OverlapPolicy.PARALLEL),
        make_spec(4),  # one-off, no retry
    ]


def history(seed: int, steps: int) -> list[tuple[str, int, RunOutcome | None]]:
    rng = random.Random(seed)
    return [
        (
            rng.choice((*OPS, "due", "due", "finish", "finish")),
            rng.randint(1, 4),
            rng.choice((RunOutcome.SUCCEEDED, RunOutcome.FAILED, RunOutcome.TIMED_OUT)),
        )
        for _ in range(steps)
    ]


def replay(engine: Engine, steps: list[tuple[str, int, RunOutcome | None]]) -> None:
    running: list[RunId] = []
    for seconds, (what, task_id, outcome) in enumerate(steps, start=1):
        events: list[Event] = []
        if what == "due":
            events = engine.due(at(seconds * 10), free_workers=2)
        elif what == "finish":
            if running:
                run_id = running.pop(0)
                if run_id in engine.running_runs:
                    assert outcome is not None
                    events = engine.finished(run_id, outcome, at(seconds * 10))
        else:
            with contextlib.suppress(InvalidStateError):  # the walk tries anything
                events = perform(engine, what, task_id, seconds * 10)
        running.extend(e.run.run_id for e in events if isinstance(e, RunDispatched))


@pytest.mark.parametrize("seed", range(15))
def test_an_allowed_operation_is_never_refused_and_a_refused_one_changes_nothing(
    seed: int,
) -> None:
    steps = history(seed, 40)
    seen: set[tuple[str, TaskState, bool]] = set()
    for length in range(len(steps) + 1):
        for task_id in (1, 2, 3, 4):
            for op in OPS:
                engine = Engine()
                for spec in specs():
                    engine.add(spec)
                replay(engine, steps[:length])
                task = engine.snapshot(task_id)
                said = refusal(op, task)
                seen.add((op, task.state, said is None))
                try:
                    events = perform(engine, op, task_id, length * 10 + 5)
                except InvalidStateError as error:
                    assert said is not None, f"{op} allowed in {task.state} but refused: {error}"
                    assert str(error) == said  # the person reads the rule's own sentence
                    continue
                if said is not None:
                    assert events == [], f"{op} refused ({said}) yet it changed something"
    assert len(seen) > 10  # the walk reached many (operation, state) pairs


def test_the_rules_in_words() -> None:
    recurring = make_spec(2, recurrence=Every(timedelta(minutes=1), EveryMode.FIXED_RATE))
    one_off = make_spec(1)
    assert run_now_refusal(one_off, TaskState.SUCCEEDED, running=False) is None
    assert run_now_refusal(one_off, TaskState.RUNNING, running=True) == (
        "task 'task 1' is already running"
    )
    assert "duplicate it" in str(run_now_refusal(recurring, TaskState.CANCELLED, running=False))
    assert retry_refusal(one_off, TaskState.EXHAUSTED, RunOutcome.FAILED, running=False) is None
    assert "has not failed" in str(
        retry_refusal(one_off, TaskState.PENDING, RunOutcome.SUCCEEDED, running=False)
    )
    assert cancel_refusal(one_off, TaskState.PAUSED) is None
    assert "nothing to cancel" in str(cancel_refusal(one_off, TaskState.SUCCEEDED))
    assert pause_refusal(one_off, TaskState.PENDING) is None
    assert "nothing to pause" in str(pause_refusal(one_off, TaskState.MISSED))
    assert resume_refusal(one_off) == "task 'task 1' is not paused"
