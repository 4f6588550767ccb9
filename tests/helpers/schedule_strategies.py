"""Hypothesis strategies for schedules under time and load (see ``schedule_sim``):
one task per misfire x overlap policy, what happens to them (time passing, clock
jumps, downtime, a person pausing, resuming, running now), and the load they run under."""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from hypothesis import strategies as st

from taskgui.core.errors import InvalidStateError
from taskgui.core.recurrence import Cron, Every, Once
from taskgui.core.retry import RetryPolicy
from taskgui.core.states import MisfirePolicy, OverlapPolicy
from taskgui.core.task import TaskSpec
from tests.helpers.factories import at, fixed_retry, make_spec
from tests.helpers.schedule_sim import ServiceLoop

POLICIES = list(itertools.product(MisfirePolicy, OverlapPolicy))
HOUR = 3600.0

recurrences = st.one_of(
    st.builds(Every, st.sampled_from([timedelta(minutes=m) for m in (5, 7, 10, 30)])),
    st.sampled_from([Cron("*/15 * * * *"), Cron("0 * * * *"), Cron("5,20 9-17 * * *")]),
    st.just(Once()),
)
graces = st.sampled_from([timedelta(0), timedelta(seconds=30), timedelta(minutes=5)])
retries = st.sampled_from([RetryPolicy.no_retry(), fixed_retry(2, delay=30)])
keys = st.sampled_from([None, None, "k"])
actions = st.lists(
    st.one_of(
        st.tuples(st.just("pass"), st.sampled_from([1.0, 59.0, 600.0, 1900.0])),
        st.tuples(st.just("jump"), st.sampled_from([0.5 * HOUR, 61 * 60.0, 3 * HOUR])),
        st.tuples(st.just("down"), st.sampled_from([120.0, 61 * 60.0, 3 * HOUR])),
        st.tuples(st.sampled_from(["pause", "resume", "run_now"]), st.integers(0, 8)),
    ),
    min_size=1,
    max_size=12,
)


@st.composite
def schedules(draw: st.DrawFn) -> list[TaskSpec]:
    """One task for each misfire x overlap policy, each with its own schedule."""
    specs = []
    for index, (misfire, overlap) in enumerate(POLICIES, start=1):
        specs.append(
            make_spec(
                index,
                first_run_at=at(draw(st.sampled_from([0, 90, 1800]))),
                recurrence=draw(recurrences),
                misfire=misfire,
                overlap=overlap,
                misfire_grace=draw(graces),
                retry=draw(retries),
                concurrency_key=draw(keys),
            )
        )
    return specs


def perform(loop: ServiceLoop, specs: list[TaskSpec], action: tuple[str, float]) -> None:
    kind, value = action
    if kind == "pass":
        loop.let_pass(value)
    elif kind == "jump":
        loop.jump(value)
    elif kind == "down":
        loop.downtime(value)
    else:
        task_id = specs[int(value)].id
        operation = {
            "pause": lambda: loop.engine.pause(task_id),
            "resume": lambda: loop.engine.resume(task_id),
            "run_now": lambda: loop.engine.run_now(task_id, loop.now),
        }[kind]
        try:
            events = operation()
        except InvalidStateError:  # e.g. run now while it runs, pause a finished task
            return
        loop.act(events)


@dataclass(frozen=True, slots=True)
class Load:
    """How the schedule runs: workers, how long runs take, how often they fail."""

    workers: int
    durations: tuple[float, ...]
    failure_rate: float
    seed: int

    def loop_options(self) -> dict[str, Any]:
        """The ``ServiceLoop`` arguments for this load."""
        return {
            "workers": self.workers,
            "rng": random.Random(self.seed),
            "durations": self.durations,
            "failure_rate": self.failure_rate,
        }


loads = st.builds(
    Load,
    workers=st.integers(1, 4),
    durations=st.sampled_from([(0.0,), (0.0, 30.0, 400.0), (30.0, 1500.0, 5000.0)]),
    failure_rate=st.sampled_from([0.0, 0.3]),
    seed=st.integers(0, 2**32 - 1),
)
