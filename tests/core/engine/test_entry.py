"""TaskEntry.snapshot: every field of the status, in its place."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from taskgui.core.engine.entry import TaskEntry
from taskgui.core.states import RunOutcome, SlotKind, TaskState, WaitReason
from taskgui.core.status import RunTicket, TaskSnapshot, TaskStatus
from taskgui.core.task import Command, TaskSpec

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def test_the_snapshot_puts_each_field_where_task_status_names_it() -> None:
    spec = TaskSpec(id=7, name="n", command=Command(line="true"), first_run_at=T0)
    entry = TaskEntry(spec)
    entry.attempt = 2
    entry.set_slot(SlotKind.RETRY, T0 + timedelta(seconds=1), attempt=3, scheduled=T0)
    entry.deferred_at = T0 + timedelta(seconds=2)
    entry.last_outcome = RunOutcome.FAILED
    entry.last_run_at = T0 + timedelta(seconds=3)
    ticket = RunTicket(
        run_id=5,
        task_id=7,
        attempt=2,
        kind=SlotKind.OCCURRENCE,
        scheduled_at=T0,
        dispatched_at=T0,
    )
    entry.add_run(ticket)
    entry.mark_started(5, T0 + timedelta(seconds=4))
    snapshot = entry.snapshot(WaitReason.WORKER, frozenset({9}))
    assert type(snapshot) is TaskSnapshot and type(snapshot.status) is TaskStatus
    assert snapshot.spec is spec
    assert snapshot.status == TaskStatus(
        state=TaskState.RUNNING,
        attempt=2,
        next_run_at=T0 + timedelta(seconds=1),
        slot_kind=SlotKind.RETRY,
        scheduled_at=T0,
        slot_attempt=3,
        deferred_at=T0 + timedelta(seconds=2),
        last_outcome=RunOutcome.FAILED,
        last_run_at=T0 + timedelta(seconds=3),
        running=1,
        running_since=T0 + timedelta(seconds=4),
        waiting=WaitReason.WORKER,
        after_marks=frozenset({9}),
    )


def test_fields_added_after_the_marks_keep_their_defaults() -> None:
    spec = TaskSpec(id=7, name="n", command=Command(line="true"), first_run_at=T0)
    status = TaskEntry(spec).snapshot(None).status
    assert len(status) == len(TaskStatus._fields)
    assert status == TaskStatus(next_run_at=None)  # every field at its default
