"""``time_queue="auto"`` (the default) picks the queue by size at each load."""

from __future__ import annotations

import pytest

from taskgui.core.engine import time_queue
from taskgui.core.engine.engine import Engine
from taskgui.core.events import RunDispatched
from taskgui.core.status import TaskSnapshot, initial_status
from tests.helpers.factories import T0, at, make_spec


def stored(count: int) -> list[TaskSnapshot]:
    specs = [make_spec(task_id, first_run_at=at(task_id)) for task_id in range(1, count + 1)]
    return [TaskSnapshot(spec, initial_status(spec)) for spec in specs]


def test_auto_takes_the_wheel_from_its_threshold_and_the_heap_below(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(time_queue, "WHEEL_FROM", 3)
    engine = Engine(time_queue="auto")
    assert engine.time_queue_kind == "heap"
    engine.load(stored(3), T0)
    assert engine.time_queue_kind == "wheel"
    assert engine.next_deadline() == at(1)
    events = engine.due(at(2), 5)
    assert [e.run.task_id for e in events if isinstance(e, RunDispatched)] == [1, 2]
    engine.load(stored(2), T0)  # a smaller schedule: back to the heap
    assert engine.time_queue_kind == "heap"
    assert engine.next_deadline() == at(1)


def test_a_named_queue_stays_whatever_the_size(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(time_queue, "WHEEL_FROM", 1)
    engine = Engine(time_queue="heap")
    engine.load(stored(5), T0)
    assert engine.time_queue_kind == "heap"


def test_an_unknown_queue_name_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown time queue 'list'"):
        Engine(time_queue="list")
