"""``ColdTasks``: ids and run times in flat arrays, in the time queue's order."""

from __future__ import annotations

import pytest

from taskgui.core.engine.cold import ColdTasks
from taskgui.core.errors import InvalidTaskError


def test_order_is_by_run_time_then_id_and_taken_tasks_are_skipped() -> None:
    cold = ColdTasks([(2, 30), (5, 10), (7, None), (9, 10), (11, 20)])
    cold.number_from(100)

    assert len(cold) == 5 and cold.head_us() == 10
    assert cold.due_by(20 / 1_000_000) == [5, 9, 11]
    assert cold.due_by(1.0, limit=2) == [5, 9]
    pos = cold.position(9)
    assert pos is not None and cold.seq(pos) == 103 and cold.run_at_us(pos) == 10
    cold.take(pos)
    cold.take(cold.position(5))  # type: ignore[arg-type]
    assert cold.position(9) is None and len(cold) == 3 and cold.head_us() == 20
    assert cold.lowest(None) == [2, 7, 11] and list(cold) == [(2, 30), (7, None), (11, 20)]
    assert cold.run_at_us(cold.position(7)) is None  # type: ignore[arg-type]
    assert cold.position(4) is None and cold.position("9") is None


def test_a_row_the_store_could_not_judge_is_set_apart_and_ids_must_ascend() -> None:
    cold = ColdTasks([(1, 10), (2, "whole"), (3, None)])
    assert cold.judge_whole == [2] and cold.position(2) is None and len(cold) == 2

    with pytest.raises(InvalidTaskError, match="appears twice"):
        ColdTasks([(1, 10), (1, 20)])
