"""The RequestQueue contract: another process files, the scheduler's process answers.

Always two connections to one store (``sender`` and ``store``), as the CLI and the
process running the schedule are: what one files the other must see, in order, and
the answer must travel back.
"""

from __future__ import annotations

from datetime import timedelta

import pytest

from taskgui.core.operation import Op
from taskgui.store import codec
from taskgui.store.protocols import ScheduleStore
from taskgui.store.requests import UnreadableRequestError, read_request
from tests.helpers.factories import T0, at
from tests.store.contract.backends import Backend


def test_a_filed_request_reaches_the_other_connection_as_stored(
    sender: ScheduleStore, store: ScheduleStore
) -> None:
    request_id = sender.submit_request(Op.PAUSE.value, 7, None, T0)
    (row,) = store.open_requests()
    assert (row.id, row.op, row.task_id, row.payload) == (request_id, "pause", 7, None)
    request = read_request(row)
    assert (request.op, request.task_id, request.created_at) == (Op.PAUSE, 7, T0)


def test_open_requests_are_oldest_first_and_ids_increase(
    sender: ScheduleStore, store: ScheduleStore
) -> None:
    ids = [
        sender.submit_request(op.value, task_id, payload, at(task_id))
        for op, task_id, payload in ((Op.PAUSE, 1, None), (Op.ADDED, 2, None), (Op.RESUME, 3, "x"))
    ]
    assert ids == sorted(ids) and len(set(ids)) == 3
    rows = store.open_requests()
    assert [row.id for row in rows] == ids
    assert [row.payload for row in rows] == [None, None, "x"]
    assert [codec.from_us(row.created_at) for row in rows] == [at(1), at(2), at(3)]


def test_a_request_without_a_task_keeps_none(sender: ScheduleStore, store: ScheduleStore) -> None:
    sender.submit_request(Op.ADDED.value, None, '{"v": 1}', T0)
    (row,) = store.open_requests()
    assert (row.task_id, row.payload) == (None, '{"v": 1}')


def test_an_answer_travels_back_and_the_request_is_no_longer_open(
    sender: ScheduleStore, store: ScheduleStore
) -> None:
    done = sender.submit_request(Op.PAUSE.value, 1, None, T0)
    failed = sender.submit_request(Op.RESUME.value, 2, None, T0)
    waiting = sender.submit_request(Op.CANCEL.value, 3, None, T0)
    assert sender.request_outcome(done) == (False, None)  # filed, not yet answered
    store.complete_request(done, None, at(1))
    store.complete_request(failed, "task 2 is not paused", at(1))
    assert sender.request_outcome(done) == (True, None)
    assert sender.request_outcome(failed) == (True, "task 2 is not paused")
    assert sender.request_outcome(waiting) == (False, None)
    assert [row.id for row in store.open_requests()] == [waiting]


def test_an_unknown_request_reads_as_lost(sender: ScheduleStore) -> None:
    assert sender.request_outcome(4242) == (True, "request 4242 was lost")


def test_answers_older_than_a_day_are_cleared_away(
    sender: ScheduleStore, store: ScheduleStore
) -> None:
    old = sender.submit_request(Op.PAUSE.value, 1, None, T0)
    store.complete_request(old, None, T0)
    new = sender.submit_request(Op.PAUSE.value, 1, None, T0 + timedelta(days=2))
    store.complete_request(new, None, T0 + timedelta(days=2))
    assert sender.request_outcome(new) == (True, None)
    assert sender.request_outcome(old) == (True, f"request {old} was lost")


def test_an_answer_that_cannot_be_stored_as_it_is_is_made_storable(
    sender: ScheduleStore, store: ScheduleStore
) -> None:
    request_id = sender.submit_request(Op.CANCEL.value, 1, None, T0)
    store.complete_request(request_id, "no such file: report \udcff", at(1))
    assert sender.request_outcome(request_id) == (True, "no such file: report \ufffd")


def test_a_hostile_row_is_returned_raw_for_the_reader_to_judge(
    sender: ScheduleStore, store: ScheduleStore
) -> None:
    # (NUL is not text every backend keeps: PostgreSQL stores U+FFFD for it.)
    sender.submit_request("<img src=x>", 1, '{"v": <b>', T0)
    (row,) = store.open_requests()
    assert (row.op, row.payload) == ("<img src=x>", '{"v": <b>')
    with pytest.raises(UnreadableRequestError, match="unknown request"):
        read_request(row)


def test_stores_do_not_share_requests(backend: Backend) -> None:
    one, other = backend.open("one"), backend.open("other")
    one.submit_request(Op.PAUSE.value, 1, None, T0)
    assert other.open_requests() == []


def test_an_operation_filed_as_an_op_reads_back_as_plain_text(
    sender: ScheduleStore, store: ScheduleStore
) -> None:
    """Callers pass ``Op`` members; the row must hold what ``read_request`` accepts."""
    sender.submit_request(Op.DELETE, 3, None, T0)
    (row,) = store.open_requests()
    assert type(row.op) is str and row.op == "delete"
    assert read_request(row).op is Op.DELETE
