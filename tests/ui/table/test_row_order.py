"""RowOrder against the plainest reference: a Python list sorted by (key, id).

Every operation is applied to both, and after each one the presented order, the rows
``find`` reports and the rows announced for inserts and moves must agree with where
the reference puts the tasks. No Qt involved.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from taskgui.ui.table.row_order import RowOrder, sorted_by_key

KEYS = st.integers(min_value=0, max_value=6)  # few values: many ties
IDS = st.integers(min_value=1, max_value=40)

_OPS = st.lists(
    st.one_of(
        st.tuples(st.just("insert"), st.lists(st.tuples(KEYS, IDS), max_size=8)),
        st.tuples(st.just("remove"), IDS),
        st.tuples(st.just("remove rows"), st.tuples(st.integers(0, 30), st.integers(0, 5))),
        st.tuples(st.just("rekey"), st.tuples(IDS, KEYS)),
        st.tuples(st.just("flip"), st.booleans()),
    ),
    max_size=40,
)


def presented(reference: dict[int, int], descending: bool) -> list[int]:
    ordered = sorted(reference, key=lambda task_id: (reference[task_id], task_id))
    return ordered[::-1] if descending else ordered


def check(order: RowOrder, reference: dict[int, int]) -> None:
    expected = presented(reference, order.descending)
    assert order.ids() == expected
    assert len(order) == len(expected)
    for row, task_id in enumerate(expected):
        assert order.id_at(row) == task_id
        assert order.find(reference[task_id], task_id) == row
        assert order.find(reference[task_id] + 100, task_id) is None  # under another key
    assert order.find(0, 999) is None


@settings(max_examples=300, deadline=None)
@given(ops=_OPS)
def test_row_order_matches_a_sorted_list(ops: list[tuple[str, Any]]) -> None:
    order = RowOrder()
    reference: dict[int, int] = {}
    for op, arg in ops:
        if op == "insert":
            new = {task_id: key for key, task_id in arg if task_id not in reference}
            ids = sorted_by_key(list(new), new)
            keys = [new[task_id] for task_id in ids]
            for index, start, stop in order.insert_plan(keys, ids):
                first, last = order.rows_for_insert(index, stop - start)
                order.insert_run(index, keys[start:stop], ids[start:stop])
                reference.update(zip(ids[start:stop], keys[start:stop], strict=True))
                # The announced rows are where the run's tasks now are, run by run.
                now = order.ids()
                assert sorted(now.index(task_id) for task_id in ids[start:stop]) == list(
                    range(first, last + 1)
                )
                assert now == presented(reference, order.descending)
        elif op == "remove":
            if arg in reference:
                row = order.find(reference.pop(arg), arg)
                assert row is not None
                order.remove_row(row)
        elif op == "remove rows":
            first, count = arg
            last = min(first + count, len(order) - 1)
            if first <= last:
                expected = order.ids()[first : last + 1]
                assert order.remove_rows(first, last) == sorted(
                    expected, key=lambda t: (reference[t], t)
                )
                for task_id in expected:
                    del reference[task_id]
        elif op == "rekey":
            task_id, key = arg
            if task_id in reference:
                row = order.find(reference[task_id], task_id)
                assert row is not None
                target = order.target_row(row, key)
                reference[task_id] = key
                assert presented(reference, order.descending).index(task_id) == target
                if target == row:
                    order.set_key(row, key)
                else:
                    order.move_row(row, target, key)
        else:
            order.descending = arg
        check(order, reference)


def test_ties_are_broken_by_task_id() -> None:
    key_of = {5: "b", 3: "a", 9: "a", 1: "b", 7: "a"}
    assert sorted_by_key([5, 3, 9, 1, 7], key_of) == [3, 7, 9, 1, 5]


def test_descending_is_ascending_reversed() -> None:
    order = RowOrder()
    order.assign([1, 1, 2], [4, 8, 2])
    assert order.ids() == [4, 8, 2]
    order.descending = True
    assert order.ids() == [2, 8, 4]
    assert order.find(1, 4) == 2
    assert order.rows_for_insert(1, 1) == (2, 2)  # between 4 and 8: above 4 when reversed


def test_keys_and_ids_must_pair_up() -> None:
    with pytest.raises(ValueError, match="length"):
        RowOrder().assign([1, 2], [1])
