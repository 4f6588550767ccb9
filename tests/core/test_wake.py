"""Wake-up policies: their text, their bounds, and the deterministic spread order."""

from __future__ import annotations

from datetime import timedelta

import pytest

from taskgui.core.errors import InvalidTaskError
from taskgui.core.wake import (
    CatchUp,
    WakeKind,
    WakePolicy,
    WakeQuestion,
    parse_wake_policy,
    spread_starts,
)
from tests.helpers.factories import T0, at

TEN = timedelta(minutes=10)


@pytest.mark.parametrize(
    ("text", "kind", "width"),
    [
        ("now", WakeKind.NOW, TEN),
        (" ASK ", WakeKind.ASK, TEN),
        ("spread", WakeKind.SPREAD, TEN),
        ("spread:30m", WakeKind.SPREAD, timedelta(minutes=30)),
        ("spread:1h30m", WakeKind.SPREAD, timedelta(minutes=90)),
    ],
)
def test_policies_read_and_write_back(text: str, kind: WakeKind, width: timedelta) -> None:
    policy = parse_wake_policy(text)
    assert (policy.kind, policy.spread) == (kind, width)
    assert parse_wake_policy(policy.text) == policy


@pytest.mark.parametrize(
    "text", ["", "later", "spread:", "spread:0s", "spread:2d", "spread:-5m", "x" * 500, "now!"]
)
def test_nonsense_and_extremes_get_a_clear_error(text: str) -> None:
    with pytest.raises(InvalidTaskError) as caught:
        parse_wake_policy(text)
    assert len(str(caught.value)) < 200


def test_a_policy_is_checked_on_construction() -> None:
    with pytest.raises(InvalidTaskError):
        WakePolicy(kind="soon")  # type: ignore[arg-type]
    with pytest.raises(InvalidTaskError):
        WakePolicy(spread=timedelta(days=400 * 365))


def test_spread_orders_by_priority_then_due_time_then_id_and_steps_evenly() -> None:
    catch_ups = [
        CatchUp(1, 0, at(300), TEN),
        CatchUp(2, 5, at(600), TEN),
        CatchUp(3, 0, at(100), TEN),
        CatchUp(4, 0, at(100), TEN),
        CatchUp(5, 5, at(500), TEN),
    ]
    starts = spread_starts(catch_ups, T0)
    assert [task_id for task_id, _ in starts] == [5, 2, 3, 4, 1]
    assert [start - T0 for _, start in starts] == [TEN * i / 5 for i in range(5)]
    assert spread_starts(list(reversed(catch_ups)), T0) == starts  # input order does not matter


def test_the_question_counts_the_runs() -> None:
    assert WakeQuestion(14, ()).text == "14 runs were missed while the computer slept"
    assert WakeQuestion(1, ()).text == "1 run was missed while the computer slept"
