"""The engine's whole suite runs over every time queue (the heap and the wheel).

Each engine test module runs once per queue (module scope, so Hypothesis's
``@given`` tests see no function-scoped fixture). The state machines are unittest
classes, which pytest does not parametrise: each names its queue itself, one class
per queue. The queue's own tests (heap, wheel, policies) run once.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from taskgui.core.engine import time_queue
from taskgui.core.engine.time_queue import QUEUES

_QUEUE_AGNOSTIC = {"test_heap", "test_time_queue", "test_time_queue_auto", "test_policies"}


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if metafunc.module.__name__.rpartition(".")[2] in _QUEUE_AGNOSTIC:
        return
    if "time_queue_kind" in metafunc.fixturenames:
        metafunc.parametrize("time_queue_kind", sorted(QUEUES), indirect=True, scope="module")


@pytest.fixture(scope="module", autouse=True)
def time_queue_kind(request: pytest.FixtureRequest) -> Iterator[str]:
    """The time queue every ``Engine()`` of the test gets by default."""
    name: str = getattr(request, "param", time_queue.DEFAULT_TIME_QUEUE)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(time_queue, "DEFAULT_TIME_QUEUE", name)
        yield name
