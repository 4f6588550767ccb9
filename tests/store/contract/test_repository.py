"""The TaskRepository contract, run against every backend (see backends.py).

Events come from a real Engine wherever that is natural (add -> due -> finished), so
what the repositories store is what the scheduler will hand them. A differential test
at the end feeds one engine's events to both repositories and compares everything.
"""

from __future__ import annotations

import tempfile
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import cast

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from taskgui.control.operations import Operations
from taskgui.control.recovery import recover
from taskgui.core.engine.engine import Engine
from taskgui.core.errors import InvalidStateError, InvalidTaskError, TaskNotFoundError
from taskgui.core.events import (
    Event,
    OccurrencesSkipped,
    RetryScheduled,
    RunDispatched,
    SkipReason,
    TaskChanged,
    TaskDropped,
    TaskRemoved,
)
from taskgui.core.output_cap import OUTPUT_CAP_BYTES, cut_bytes
from taskgui.core.recurrence import Every
from taskgui.core.retry import RetryPolicy
from taskgui.core.states import MisfirePolicy, OverlapPolicy, RunOutcome, SlotKind, TaskState
from taskgui.core.status import RunResult, TaskSnapshot, TaskStatus, initial_status
from taskgui.core.task import TaskSpec
from taskgui.store.memory import MemoryRepository
from taskgui.store.protocols import (
    INTERRUPTED_ERROR,
    RunRecord,
    TaskRepository,
    cap_output,
)
from taskgui.store.sqlite.repository import SqliteRepository
from tests.helpers.factories import T0, at, fixed_retry, make_spec
from tests.helpers.store import (
    Driver,
    persistent,
    rich_specs,
    stored,
)
from tests.store.contract.backends import RepositoryFactory

EVERY_10S = Every(timedelta(seconds=10))


# ------------------------------------------------------------------ add_tasks


def test_add_tasks_assigns_increasing_ids_and_stores_the_initial_status(
    repository: TaskRepository,
) -> None:
    specs = [
        make_spec(0, name="first"),
        make_spec(77, name="id given by the caller is replaced"),
        make_spec(0, name="paused", paused=True, first_run_at=at(30)),
    ]

    added = repository.add_tasks(specs, T0)

    assert [spec.id for spec in added] == [1, 2, 3]
    assert added == [spec.with_id(index) for index, spec in enumerate(specs, start=1)]
    for spec in added:
        assert repository.get(spec.id) == TaskSnapshot(spec, initial_status(spec))
    assert repository.get(3).state is TaskState.PAUSED
    assert repository.get(1).state is TaskState.PENDING

    more = repository.add_tasks([make_spec(0), make_spec(0)], at(1))
    assert [spec.id for spec in more] == [4, 5]


def test_initial_status_is_what_the_engine_computes(driver: Driver) -> None:
    for spec in rich_specs().values():
        task_id = driver.add_one(spec)
        assert stored(driver.repository.get(task_id)) == driver.snapshot(task_id)


def test_an_empty_batch_adds_nothing(repository: TaskRepository) -> None:
    assert repository.add_tasks([], T0) == []
    assert repository.list_tasks() == []
    assert [spec.id for spec in repository.add_tasks([make_spec(0)], T0)] == [1]


def test_ids_of_removed_tasks_are_never_reused(driver: Driver) -> None:
    first, second, third = driver.add(make_spec(0), make_spec(0), make_spec(0))
    driver.remove(third.id, T0)
    driver.remove(second.id, T0)

    [fresh] = driver.add(make_spec(0))

    assert fresh.id == 4
    assert [task.id for task in driver.repository.list_tasks()] == [first.id, fresh.id]


def test_a_failed_bulk_add_stores_nothing(repository: TaskRepository) -> None:
    [kept] = repository.add_tasks([make_spec(0, name="kept")], T0)
    batch: list[object] = [make_spec(0, name="a"), "not a TaskSpec", make_spec(0, name="c")]

    with pytest.raises(AttributeError):
        repository.add_tasks(cast(list[TaskSpec], batch), T0)

    assert repository.list_tasks() == [TaskSnapshot(kept, initial_status(kept))]
    assert [task.id for task in repository.load(T0).tasks] == [kept.id]


def test_a_failed_bulk_add_uses_up_no_ids(repository: TaskRepository) -> None:
    batch: list[object] = [make_spec(0), make_spec(0), "not a TaskSpec"]
    with pytest.raises(AttributeError):
        repository.add_tasks(cast(list[TaskSpec], batch), T0)

    assert [spec.id for spec in repository.add_tasks([make_spec(0)], T0)] == [1]


def test_get_of_an_unknown_id_raises_task_not_found(repository: TaskRepository) -> None:
    repository.add_tasks([make_spec(0)], T0)

    with pytest.raises(TaskNotFoundError) as caught:
        repository.get(2)

    assert caught.value.task_id == 2
    assert isinstance(caught.value, LookupError)
    assert "2" in str(caught.value)


def test_history_limit_must_be_positive(new_repository: RepositoryFactory) -> None:
    with pytest.raises(ValueError, match="history_limit"):
        new_repository(history_limit=0)


# ---------------------------------------------------------- TaskChanged round trip


@pytest.mark.parametrize("variant", sorted(rich_specs()))
def test_task_changed_round_trips_every_spec_field(driver: Driver, variant: str) -> None:
    task_id = driver.add_one(make_spec(0))
    edited = rich_specs()[variant].with_id(task_id)

    events = driver.apply(driver.engine.update(edited, at(1)), at(1))

    assert any(isinstance(event, TaskChanged) for event in events)
    got = driver.repository.get(task_id)
    assert got.spec == edited
    # Field by field too, so a failure names the field (and equality of frozen
    # values cannot hide, say, a tz-naive datetime that compares equal).
    for name in TaskSpec.__dataclass_fields__:
        assert getattr(got.spec, name) == getattr(edited, name), name
    assert got.spec.first_run_at.utcoffset() == timedelta(0)
    assert got.spec.first_run_at.microsecond == 123_457
    assert stored(got) == driver.snapshot(task_id)
    assert driver.repository.load(at(2)).tasks == [got]
    assert driver.repository.list_tasks() == [got]


def _status_with_every_field_set() -> TaskStatus:
    return TaskStatus(
        state=TaskState.RETRYING,
        attempt=2,
        next_run_at=at(90) + timedelta(microseconds=1),
        slot_kind=SlotKind.RETRY,
        scheduled_at=at(30) + timedelta(microseconds=999_999),
        slot_attempt=3,
        deferred_at=at(3600) + timedelta(microseconds=42),
        last_outcome=RunOutcome.TIMED_OUT,
        last_run_at=at(31) + timedelta(microseconds=7),
    )


def test_task_changed_round_trips_every_status_field(repository: TaskRepository) -> None:
    [spec] = repository.add_tasks([make_spec(0, retry=fixed_retry(5))], T0)
    status = _status_with_every_field_set()
    # Every field differs from its default, so a column that is not stored shows.
    defaults = TaskStatus()
    for name in ("state", "attempt", "next_run_at", "slot_kind", "scheduled_at"):
        assert getattr(status, name) != getattr(defaults, name), name
    for name in ("slot_attempt", "deferred_at", "last_outcome", "last_run_at"):
        assert getattr(status, name) != getattr(defaults, name), name

    repository.apply([TaskChanged(TaskSnapshot(spec, status))], at(40))

    got = repository.get(spec.id).status
    assert got == status
    for name in TaskStatus._fields:
        assert getattr(got, name) == getattr(status, name), name
    assert got.next_run_at is not None and got.next_run_at.microsecond == 1
    assert got.next_run_at.utcoffset() == timedelta(0)


@pytest.mark.parametrize("state", list(TaskState))
def test_every_state_and_outcome_round_trips(repository: TaskRepository, state: TaskState) -> None:
    [spec] = repository.add_tasks([make_spec(0)], T0)
    for outcome in [None, *RunOutcome]:
        for slot_kind in [None, *SlotKind]:
            status = TaskStatus(
                state=state,
                last_outcome=outcome,
                slot_kind=slot_kind,
                next_run_at=None if slot_kind is None else at(5),
                scheduled_at=None if slot_kind is None else at(5),
            )
            repository.apply([TaskChanged(TaskSnapshot(spec, status))], T0)
            assert repository.get(spec.id).status == status


def test_live_only_status_fields_are_not_kept(driver: Driver) -> None:
    """running / running_since / waiting describe this process; no repository can
    give them back after a restart, so both must answer the same: without them."""
    task_id = driver.add_one(make_spec(0, concurrency_key="k"))
    other = driver.add_one(make_spec(0, concurrency_key="k"))
    [ticket] = driver.due(T0, workers=2)
    driver.start(ticket, at(1))
    live = driver.engine.snapshot(ticket.task_id)
    assert live.status.running == 1 and live.status.running_since == at(1)
    waiting = driver.engine.snapshot(other if ticket.task_id == task_id else task_id)
    assert waiting.status.waiting is not None

    assert driver.repository.get(live.id) == stored(live)
    assert driver.repository.get(waiting.id) == stored(waiting)


def test_task_changed_for_an_unknown_task_creates_nothing(repository: TaskRepository) -> None:
    ghost = make_spec(42)
    repository.apply([TaskChanged(TaskSnapshot(ghost, initial_status(ghost)))], T0)

    with pytest.raises(TaskNotFoundError):
        repository.get(42)
    assert repository.list_tasks() == []


def test_applying_no_events_changes_nothing(repository: TaskRepository) -> None:
    [spec] = repository.add_tasks([make_spec(0)], T0)
    repository.apply([], at(5))
    assert repository.load(at(5)).tasks == [TaskSnapshot(spec, initial_status(spec))]


# --------------------------------------------------------------------- runs


def test_dispatch_opens_a_run_and_finishing_closes_it(driver: Driver) -> None:
    task_id = driver.add_one(make_spec(0, retry=fixed_retry(3, delay=30)))

    [ticket] = driver.due(at(0.5))

    [run] = driver.repository.runs(task_id)
    assert run == RunRecord(
        id=run.id,
        task_id=task_id,
        attempt=1,
        kind=SlotKind.OCCURRENCE,
        scheduled_at=T0,
        started_at=at(0.5),
        finished_at=None,
        outcome=None,
    )
    assert driver.repository.get(task_id).state is TaskState.RUNNING
    assert stored(driver.repository.get(task_id)) == driver.snapshot(task_id)

    result = RunResult(exit_code=3, error="exit status 3", output="step 1\nboom\n")
    events = driver.finish(ticket, RunOutcome.FAILED, at(7.25), result)

    assert any(isinstance(event, RetryScheduled) for event in events)
    [closed] = driver.repository.runs(task_id)
    assert closed == replace(
        run,
        finished_at=at(7.25),
        outcome=RunOutcome.FAILED,
        exit_code=3,
        error="exit status 3",
        output="step 1\nboom\n",
    )
    task = driver.repository.get(task_id)
    assert stored(task) == driver.snapshot(task_id)
    assert task.state is TaskState.RETRYING
    assert task.status.attempt == 1
    assert task.status.next_run_at == at(37.25)
    assert task.status.slot_attempt == 2


def test_a_withdrawn_run_is_forgotten_and_the_task_restored(driver: Driver) -> None:
    task_id = driver.add_one(make_spec(0, recurrence=Every(timedelta(minutes=1))))
    before = driver.repository.get(task_id)
    [ticket] = driver.due(at(0.5))
    assert len(driver.repository.runs(task_id)) == 1

    driver.apply(driver.engine.withdraw(ticket.run_id), at(0.6))

    assert driver.repository.runs(task_id) == []
    assert driver.repository.get(task_id) == before
    [again] = driver.due(at(0.7))  # and it runs as it would have
    assert again.scheduled_at == ticket.scheduled_at
    assert [run.scheduled_at for run in driver.repository.runs(task_id)] == [T0]


def test_a_retry_is_recorded_as_its_own_run(driver: Driver) -> None:
    task_id = driver.add_one(make_spec(0, retry=fixed_retry(3, delay=30)))
    [first] = driver.due(T0)
    driver.finish(first, RunOutcome.TIMED_OUT, at(5), RunResult(error="timed out after 5s"))

    [second] = driver.due(at(35))
    driver.finish(second, RunOutcome.SUCCEEDED, at(36), RunResult(exit_code=0))

    newest, oldest = driver.repository.runs(task_id)
    assert (newest.kind, newest.attempt, newest.outcome) == (
        SlotKind.RETRY,
        2,
        RunOutcome.SUCCEEDED,
    )
    assert (oldest.kind, oldest.attempt, oldest.outcome) == (
        SlotKind.OCCURRENCE,
        1,
        RunOutcome.TIMED_OUT,
    )
    assert oldest.error == "timed out after 5s"
    assert newest.exit_code == 0
    assert driver.repository.get(task_id).state is TaskState.SUCCEEDED


def test_a_retry_is_recorded_as_scheduled_when_it_was_due(driver: Driver) -> None:
    # Failed at 00:05 with 30 s to wait: the retry was due at 00:35, and ran then. The
    # history must say "scheduled 00:35", not 00:05 (when it was decided): on time.
    task_id = driver.add_one(make_spec(0, retry=fixed_retry(3, delay=30)))
    [first] = driver.due(T0)
    driver.finish(first, RunOutcome.FAILED, at(5))
    [second] = driver.due(at(35))
    driver.finish(second, RunOutcome.SUCCEEDED, at(36))

    retry, occurrence = driver.repository.runs(task_id)
    assert (retry.kind, retry.scheduled_at, retry.started_at) == (SlotKind.RETRY, at(35), at(35))
    assert occurrence.scheduled_at == T0


def test_a_finish_without_a_result_stores_no_details(driver: Driver) -> None:
    task_id = driver.add_one()
    [ticket] = driver.due(T0)
    driver.finish(ticket, RunOutcome.CANCELLED, at(1))

    [run] = driver.repository.runs(task_id)
    assert (run.outcome, run.exit_code, run.error, run.output) == (
        RunOutcome.CANCELLED,
        None,
        None,
        "",
    )


def test_long_output_is_cut_to_its_tail(driver: Driver) -> None:
    task_id = driver.add_one()
    [ticket] = driver.due(T0)
    body = "".join(f"line {index:06d}\n" for index in range(20_000))  # ~240 KB
    output = "FIRST LINE\n" + body + "the error is at the end\n"

    driver.finish(ticket, RunOutcome.FAILED, at(1), RunResult(exit_code=1, output=output))

    [run] = driver.repository.runs(task_id)
    assert run.output.endswith(body[-5_000:] + "the error is at the end\n")
    assert "FIRST LINE" not in run.output
    assert "cut" in run.output.splitlines()[0]
    kept = run.output.split("\n", 1)[1]
    assert kept == output[-len(kept) :]
    assert cut_bytes(run.output) == len(output.encode()) - len(kept.encode())  # all counted
    assert len(run.output.encode()) == OUTPUT_CAP_BYTES


@pytest.mark.parametrize("character", ["x", "é", "€", "🙂"])
def test_stored_output_fits_in_the_cap(driver: Driver, character: str) -> None:
    task_id = driver.add_one()
    [ticket] = driver.due(T0)
    driver.finish(ticket, RunOutcome.FAILED, at(1), RunResult(output=character * 200_000))

    [run] = driver.repository.runs(task_id)
    assert cut_bytes(run.output) == len((character * 200_000).encode()) - len(
        run.output.split("\n", 1)[1].encode()
    )
    assert OUTPUT_CAP_BYTES - 4 < len(run.output.encode()) <= OUTPUT_CAP_BYTES


def test_output_that_is_not_valid_unicode_is_stored(driver: Driver) -> None:
    """A runner decoding with errors='surrogateescape' hands over lone surrogates."""
    task_id = driver.add_one()
    [ticket] = driver.due(T0)
    raw = b"caf\xe9 au lait\n"
    output = raw.decode("utf-8", "surrogateescape")
    error = "no such file: " + b"r\xe9sum\xe9.txt".decode("utf-8", "surrogateescape")

    driver.finish(
        ticket, RunOutcome.FAILED, at(1), RunResult(exit_code=1, error=error, output=output)
    )

    [run] = driver.repository.runs(task_id)
    assert run.outcome is RunOutcome.FAILED
    assert run.output == "caf\ufffd au lait\n"
    assert run.error == "no such file: r\ufffdsum\ufffd.txt"
    assert driver.repository.get(task_id).status.last_outcome is RunOutcome.FAILED


def test_long_output_that_is_not_valid_unicode_is_cut_and_stored(driver: Driver) -> None:
    task_id = driver.add_one()
    [ticket] = driver.due(T0)
    output = ("é" + "\udce9") * 50_000 + "the end\n"

    driver.finish(ticket, RunOutcome.FAILED, at(1), RunResult(output=output))

    [run] = driver.repository.runs(task_id)
    assert cut_bytes(run.output) and run.output.endswith("\ufffdthe end\n")
    assert len(run.output.encode()) <= OUTPUT_CAP_BYTES


SURROGATE = b"\xff".decode("utf-8", "surrogateescape")


@pytest.mark.parametrize("field", ["name", "concurrency_key"])
def test_a_name_or_key_that_cannot_be_stored_is_refused_and_nothing_is_added(
    repository: TaskRepository, field: str
) -> None:
    [kept] = repository.add_tasks([make_spec(0)], T0)
    bad = make_spec(0, **{field: f"report {SURROGATE}"})

    for batch in ([bad], [make_spec(0), bad]):
        with pytest.raises(InvalidTaskError) as caught:
            repository.add_tasks(batch, T0)
        assert field.replace("_", " ") in str(caught.value)
        assert "retype" in str(caught.value)

    assert [task.id for task in repository.list_tasks()] == [kept.id]
    assert [spec.id for spec in repository.add_tasks([make_spec(0)], T0)] == [kept.id + 1]


def test_an_edit_that_cannot_be_stored_is_refused_and_nothing_is_applied(
    driver: Driver,
) -> None:
    task_id = driver.add_one(make_spec(0, retry=fixed_retry(3, delay=30)))
    other = driver.add_one(make_spec(0, first_run_at=at(100)))
    [ticket] = driver.due(T0)
    before = driver.repository.get(task_id)
    finished = driver.engine.finished(ticket.run_id, RunOutcome.FAILED, at(1))
    edited = driver.engine.update(make_spec(other, name=f"bad {SURROGATE}"), at(1))

    with pytest.raises(InvalidTaskError):
        driver.repository.apply([*finished, *edited], at(1))

    assert driver.repository.get(task_id) == before
    assert [run.outcome for run in driver.repository.runs(task_id)] == [None]
    assert driver.repository.get(other).spec.name == make_spec(0).name


def test_operations_refuse_an_unstorable_edit_before_the_engine_takes_it(
    repository: TaskRepository,
) -> None:
    operations = Operations(Engine(), repository)
    [spec], _ = operations.add([make_spec(0, name="before")], T0)

    with pytest.raises(InvalidTaskError):
        operations.update(replace(spec, name=f"after {SURROGATE}"), at(1))

    assert operations.engine.snapshot(spec.id).spec.name == "before"
    assert repository.get(spec.id).spec.name == "before"


def test_skipped_occurrences_are_recorded_as_a_missed_run(driver: Driver) -> None:
    spec = make_spec(
        0,
        recurrence=Every(timedelta(minutes=1)),
        misfire=MisfirePolicy.SKIP,
        misfire_grace=timedelta(seconds=10),
    )
    task_id = driver.add_one(spec)

    # Found five and a half minutes late (the machine slept): with misfire=skip the
    # late occurrence and the five after it are all dropped (00:05 is 30 s late, past
    # its 10 s grace; inside a grace it would run).
    events = driver.due_events(at(330))

    [skipped] = [event for event in events if isinstance(event, OccurrencesSkipped)]
    assert (skipped.count, skipped.exact, skipped.first_at) == (6, True, T0)
    assert not any(isinstance(event, RunDispatched) for event in events)
    [run] = driver.repository.runs(task_id)
    assert (run.outcome, run.kind, run.attempt) == (RunOutcome.MISSED, SlotKind.OCCURRENCE, 0)
    assert (run.scheduled_at, run.started_at, run.finished_at) == (T0, None, at(330))
    assert run.error is not None and "skipped 6 occurrences" in run.error
    assert run.missed == 6
    task = driver.repository.get(task_id)
    assert stored(task) == driver.snapshot(task_id)
    assert task.status.last_outcome is RunOutcome.MISSED
    assert task.status.next_run_at == at(360)


def test_a_single_skip_says_so_in_the_singular(driver: Driver) -> None:
    spec = make_spec(0, recurrence=EVERY_10S, overlap=OverlapPolicy.SKIP)
    task_id = driver.add_one(spec)
    driver.due(T0)  # runs, and keeps running past the next occurrence

    events = driver.due_events(at(10))

    [skipped] = [event for event in events if isinstance(event, OccurrencesSkipped)]
    assert skipped.reason is SkipReason.OVERLAP
    missed, running = driver.repository.runs(task_id)
    assert missed.outcome is RunOutcome.MISSED and running.outcome is None
    assert missed.scheduled_at == at(10)
    assert missed.error is not None and "skipped 1 occurrence " in missed.error


def test_an_uncertain_skip_count_says_at_least(driver: Driver) -> None:
    task_id = driver.add_one(make_spec(0, recurrence=EVERY_10S))
    driver.apply([OccurrencesSkipped(task_id, 10_000, False, at(10), SkipReason.MISFIRE)], at(1e6))

    [run] = driver.repository.runs(task_id)
    assert run.outcome is RunOutcome.MISSED
    assert run.error is not None and "at least 10000 occurrences" in run.error
    assert run.missed == 10_000  # a lower bound, as the text says


# ------------------------------------------------------------------- removal


def test_task_removed_deletes_the_task_and_its_runs(driver: Driver) -> None:
    gone = driver.add_one(make_spec(0, recurrence=EVERY_10S))
    kept = driver.add_one(make_spec(0, recurrence=EVERY_10S))
    for step in range(3):
        for ticket in driver.due(at(10 * step), workers=2):
            driver.finish(ticket, RunOutcome.SUCCEEDED, at(10 * step + 1))
    kept_runs = driver.repository.runs(kept)
    assert len(kept_runs) == 3 and len(driver.repository.runs(gone)) == 3

    events = driver.remove(gone, at(25))

    assert TaskRemoved(gone) in events
    with pytest.raises(TaskNotFoundError):
        driver.repository.get(gone)
    assert driver.repository.runs(gone) == []
    assert driver.repository.runs(kept) == kept_runs
    assert [task.id for task in driver.repository.load(at(25)).tasks] == [kept]
    assert [task.id for task in driver.repository.list_tasks()] == [kept]


def test_a_dropped_task_is_kept_but_set_aside_from_every_later_load(
    repository: TaskRepository,
) -> None:
    [bad, good] = repository.add_tasks([make_spec(0), make_spec(0)], T0)

    repository.apply([TaskDropped(bad.id, "it broke"), TaskDropped(bad.id, "again")], at(1))
    repository.apply([TaskDropped(999, "no such row")], at(1))  # nothing to keep

    assert [(task.task_id, task.error) for task in repository.quarantined()] == [
        (bad.id, "it broke")
    ]
    assert [task.id for task in repository.load(at(2)).tasks] == [good.id]
    engine = Engine()
    recover(repository, engine, at(2))
    assert [task.id for task in engine.snapshots()] == [good.id]
    assert [task.id for task in repository.list_tasks()] == [good.id]
    assert repository.get(bad.id).id == bad.id  # kept, for a person to look at
    repository.apply([TaskRemoved(bad.id)], at(3))
    assert repository.quarantined() == []


def test_a_run_that_finishes_after_its_task_was_removed_is_dropped(driver: Driver) -> None:
    task_id = driver.add_one()
    [ticket] = driver.due(T0)
    driver.remove(task_id, at(1))

    events = driver.finish(ticket, RunOutcome.CANCELLED, at(2), RunResult(exit_code=-15))

    assert len(events) == 1
    assert driver.repository.runs(task_id) == []
    assert driver.repository.list_tasks() == []
    assert driver.repository.interrupt_open_runs(at(3)) == []


# ------------------------------------------------------------------- history


def test_history_keeps_the_newest_history_limit_finished_runs(
    new_repository: RepositoryFactory,
) -> None:
    driver = Driver(new_repository(history_limit=5))
    task_id = driver.add_one(make_spec(0, recurrence=EVERY_10S, retry=RetryPolicy.no_retry()))
    other = driver.add_one(make_spec(0, recurrence=Every(timedelta(hours=1))))

    for index in range(12):
        for ticket in driver.due(at(10 * index), workers=2):
            outcome = RunOutcome.SUCCEEDED if index % 3 else RunOutcome.FAILED
            result = RunResult(exit_code=index if ticket.task_id == task_id else 100)
            driver.finish(ticket, outcome, at(10 * index + 1), result)

    runs = driver.repository.runs(task_id)
    assert [run.exit_code for run in runs] == [11, 10, 9, 8, 7]
    assert [run.scheduled_at for run in runs] == [at(10 * index) for index in (11, 10, 9, 8, 7)]
    # Pruning one task's history leaves the other's alone.
    assert [run.exit_code for run in driver.repository.runs(other)] == [100]


def test_an_open_run_does_not_count_against_the_history_limit(
    new_repository: RepositoryFactory,
) -> None:
    driver = Driver(new_repository(history_limit=3))
    spec = make_spec(0, recurrence=EVERY_10S, overlap=OverlapPolicy.PARALLEL)
    task_id = driver.add_one(spec)

    # Each run takes 15 s, so the next one has started when the previous finishes.
    previous = None
    for index in range(8):
        [ticket] = driver.due(at(10 * index))
        if previous is not None:
            driver.finish(previous, RunOutcome.SUCCEEDED, at(10 * index + 5))
        previous = ticket

    runs = driver.repository.runs(task_id)
    assert runs[0].outcome is None
    assert [run.scheduled_at for run in runs[1:]] == [at(60), at(50), at(40)]


def test_skipped_runs_count_against_the_history_limit(
    new_repository: RepositoryFactory,
) -> None:
    driver = Driver(new_repository(history_limit=5))
    spec = make_spec(0, recurrence=EVERY_10S, overlap=OverlapPolicy.SKIP)
    task_id = driver.add_one(spec)
    driver.due(T0)  # this run hangs

    for index in range(1, 13):
        events = driver.due_events(at(10 * index))
        assert any(isinstance(event, OccurrencesSkipped) for event in events)

    runs = driver.repository.runs(task_id)
    assert [run.outcome for run in runs] == [RunOutcome.MISSED] * 5 + [None]
    assert [run.scheduled_at for run in runs[:5]] == [at(10 * i) for i in (12, 11, 10, 9, 8)]


def test_a_missed_record_outlives_the_catch_up_runs_after_it(
    new_repository: RepositoryFactory,
) -> None:
    # run_all after 12 missed minutes, bounded at 5: "skipped 7" is written first, then
    # the 5 catch-up runs. Those must not push the record of what was lost out of a
    # history of 5 the moment they finish: missed records have a budget of their own.
    driver = Driver(new_repository(history_limit=5), Engine(run_all_limit=5))
    spec = make_spec(0, recurrence=Every(timedelta(minutes=1)), misfire=MisfirePolicy.RUN_ALL)
    task_id = driver.add_one(spec)
    [first] = driver.due(T0)
    driver.finish(first, RunOutcome.SUCCEEDED, at(1))
    now = at(12 * 60 + 30)
    while tickets := driver.due(now):
        for ticket in tickets:
            driver.finish(ticket, RunOutcome.SUCCEEDED, now)

    runs = driver.repository.runs(task_id)
    missed = [run for run in runs if run.outcome is RunOutcome.MISSED]
    assert [(run.scheduled_at, run.error and run.error.split(" (")[0]) for run in missed] == [
        (at(60), "skipped 7 occurrences")
    ]
    ran = [run.scheduled_at for run in runs if run.outcome is RunOutcome.SUCCEEDED]
    assert ran == [at(60 * k) for k in (12, 11, 10, 9, 8)]  # the newest 5 runs


def test_runs_are_newest_first_and_limited(driver: Driver) -> None:
    task_id = driver.add_one(make_spec(0, recurrence=EVERY_10S))
    for index in range(4):
        [ticket] = driver.due(at(10 * index))
        driver.finish(ticket, RunOutcome.SUCCEEDED, at(10 * index + 2))
    driver.due(at(40))  # and one still going

    everything = driver.repository.runs(task_id)
    assert [run.scheduled_at for run in everything] == [at(s) for s in (40, 30, 20, 10, 0)]
    assert [run.outcome is None for run in everything] == [True, False, False, False, False]
    assert [run.id for run in everything] == sorted((run.id for run in everything), reverse=True)
    assert driver.repository.runs(task_id, limit=2) == everything[:2]
    assert driver.repository.runs(task_id, limit=1) == everything[:1]
    assert driver.repository.runs(task_id + 1) == []


# --------------------------------------------------------------- interruption


def test_interrupt_open_runs_closes_them_and_returns_them(driver: Driver) -> None:
    done = driver.add_one(make_spec(0, first_run_at=at(0)))
    first = driver.add_one(make_spec(0, first_run_at=at(1)))
    second = driver.add_one(make_spec(0, first_run_at=at(2)))
    [finished] = driver.due(at(0))
    driver.finish(finished, RunOutcome.SUCCEEDED, at(0.5))
    running = driver.due(at(3), workers=2)
    assert {ticket.task_id for ticket in running} == {first, second}
    finished_before = driver.repository.runs(done)

    interrupted = driver.repository.interrupt_open_runs(at(99))

    assert [(run.task_id, run.attempt, run.started_at) for run in interrupted] == [
        (first, 1, at(3)),
        (second, 1, at(3)),
    ]
    assert interrupted[0].id < interrupted[1].id
    for record in interrupted:
        [run] = driver.repository.runs(record.task_id)
        assert run == replace(
            record,
            outcome=RunOutcome.INTERRUPTED,
            finished_at=at(99),
            error=INTERRUPTED_ERROR,
        )
    assert driver.repository.runs(done) == finished_before
    assert driver.repository.interrupt_open_runs(at(100)) == []


def test_the_output_so_far_of_an_open_run_is_kept_and_survives_a_crash(driver: Driver) -> None:
    task_id = driver.add_one(make_spec(0))
    [ticket] = driver.due(at(0))
    driver.repository.record_run_output(ticket.run_id, "step 1\n")
    driver.repository.record_run_output(ticket.run_id, "step 1\nstep 2\n")
    [run] = driver.repository.runs(task_id)
    assert (run.outcome, run.output) == (None, "step 1\nstep 2\n")
    [interrupted] = driver.repository.interrupt_open_runs(at(9))  # the next start
    assert interrupted.output == "step 1\nstep 2\n"
    [closed] = driver.repository.runs(task_id)
    assert (closed.outcome, closed.output) == (RunOutcome.INTERRUPTED, "step 1\nstep 2\n")
    driver.repository.record_run_output(ticket.run_id, "too late")  # the run is over
    assert driver.repository.runs(task_id)[0].output == "step 1\nstep 2\n"


def test_the_output_so_far_is_capped_like_a_result(driver: Driver) -> None:
    task_id = driver.add_one(make_spec(0))
    [ticket] = driver.due(at(0))
    driver.repository.record_run_output(ticket.run_id, "x" * (OUTPUT_CAP_BYTES * 2))
    [run] = driver.repository.runs(task_id)
    assert len(run.output.encode()) <= OUTPUT_CAP_BYTES


def test_recovery_sends_an_interrupted_task_to_its_retry_policy(
    repository: TaskRepository,
) -> None:
    before = Driver(repository)
    task_id = before.add_one(make_spec(0, retry=fixed_retry(3, delay=60)))
    before.due(T0)
    assert repository.get(task_id).state is TaskState.RUNNING

    recovery = recover(repository, Engine(), at(30))  # the next process

    [run] = recovery.interrupted
    assert run.task_id == task_id and recovery.task_count == 1
    assert RetryScheduled(task_id, 2, 3, at(90), timedelta(seconds=60)) in recovery.events
    task = repository.get(task_id)
    assert task.state is TaskState.RETRYING
    assert (task.status.next_run_at, task.status.slot_attempt) == (at(90), 2)
    assert task.status.last_outcome is RunOutcome.INTERRUPTED
    [closed] = repository.runs(task_id)
    assert (closed.outcome, closed.error) == (RunOutcome.INTERRUPTED, INTERRUPTED_ERROR)


# ------------------------------------------------------------------- queries


def _tasks_in_every_state(driver: Driver) -> dict[TaskState, int]:
    ids = {
        TaskState.SUCCEEDED: driver.add_one(make_spec(0, first_run_at=at(1))),
        TaskState.EXHAUSTED: driver.add_one(make_spec(0, first_run_at=at(2))),
        TaskState.RETRYING: driver.add_one(
            make_spec(0, first_run_at=at(3), retry=fixed_retry(3, delay=86_400))
        ),
        TaskState.RUNNING: driver.add_one(make_spec(0, first_run_at=at(4))),
        TaskState.PAUSED: driver.add_one(make_spec(0, first_run_at=at(5), paused=True)),
        TaskState.MISSED: driver.add_one(
            make_spec(0, first_run_at=at(6), misfire=MisfirePolicy.SKIP)
        ),
        TaskState.CANCELLED: driver.add_one(make_spec(0, first_run_at=at(100_000))),
        TaskState.PENDING: driver.add_one(make_spec(0, first_run_at=at(100_000))),
    }
    tickets = {ticket.task_id: ticket for ticket in driver.due(at(4), workers=10)}
    driver.finish(tickets[ids[TaskState.SUCCEEDED]], RunOutcome.SUCCEEDED, at(5))
    driver.finish(tickets[ids[TaskState.EXHAUSTED]], RunOutcome.FAILED, at(5))
    driver.finish(tickets[ids[TaskState.RETRYING]], RunOutcome.FAILED, at(5))
    assert driver.due(at(100)) == []  # the one-off found 94 s late is skipped
    driver.cancel(ids[TaskState.CANCELLED], at(100))
    return ids


def test_list_tasks_filters_by_state(driver: Driver) -> None:
    ids = _tasks_in_every_state(driver)

    for state in TaskState:
        listed = driver.repository.list_tasks(state)
        assert [task.id for task in listed] == [ids[state]], state
        assert [stored(task) for task in listed] == [driver.snapshot(ids[state])]
    assert [task.id for task in driver.repository.list_tasks()] == sorted(ids.values())


def test_load_returns_every_task_as_the_engine_left_it(driver: Driver) -> None:
    ids = _tasks_in_every_state(driver)

    loaded = driver.repository.load(at(200))

    assert loaded.quarantined == []
    assert [stored(task) for task in loaded.tasks] == [
        driver.snapshot(task_id) for task_id in sorted(ids.values())
    ]
    assert loaded.tasks == driver.repository.list_tasks()


def test_a_loaded_schedule_resumes_where_it_stopped(driver: Driver) -> None:
    """A fresh engine fed by load() makes the same decisions as the one that wrote it."""
    ids = _tasks_in_every_state(driver)
    driver.finish(
        driver.engine.running_runs[min(driver.engine.running_runs)], RunOutcome.SUCCEEDED, at(6)
    )

    fresh = Engine()
    fresh.load(driver.repository.load(at(7)).tasks, at(7))

    for task_id in ids.values():
        assert stored(fresh.snapshot(task_id)) == driver.snapshot(task_id)
    assert fresh.next_deadline() == driver.engine.next_deadline()


def test_a_start_with_deferred_tasks_decides_as_a_full_load_does(driver: Driver) -> None:
    """load_for_start (ids and run times, the rest on first use) against load()."""
    ids = _tasks_in_every_state(driver)
    recurring = driver.add_one(
        make_spec(0, first_run_at=at(50), recurrence=Every(timedelta(hours=1)), priority=3)
    )
    repository = driver.repository

    full = Engine()
    full_events = full.load(repository.load(at(7)).tasks, at(7))
    start = repository.load_for_start(at(7))
    lazy = Engine()
    lazy_events = lazy.load(start.tasks, at(7), start.deferred)

    assert start.quarantined == []
    assert lazy_events == full_events  # the running task, sent to its retry policy
    assert len(lazy) == len(full) == len(ids) + 1
    assert lazy.next_deadline() == full.next_deadline()
    for when in (at(60), at(100_001), at(200_000)):
        assert lazy.due(when, 10) == full.due(when, 10)
    assert lazy.snapshot(recurring) == full.snapshot(recurring)
    assert {s.id: s for s in lazy.snapshots()} == {s.id: s for s in full.snapshots()}


# -------------------------------------------------------------- cap_output


def test_cap_output_leaves_short_output_alone() -> None:
    assert cap_output("") == ""
    exact = "é" * (OUTPUT_CAP_BYTES // 2)
    assert cap_output(exact) == exact


def test_cap_output_never_splits_a_character() -> None:
    text = "€" * 30_000  # 3 bytes each, 90,000 bytes
    capped = cap_output(text)
    dropped = cut_bytes(capped)
    kept = capped.split("\n", 1)[1]
    assert dropped == 90_000 - len(kept.encode())
    assert set(kept) == {"€"}
    assert OUTPUT_CAP_BYTES - 3 < len(capped.encode()) <= OUTPUT_CAP_BYTES


@pytest.mark.parametrize("character", ["a", "é"])
def test_cap_output_keeps_output_at_the_cap_and_cuts_one_byte_more(character: str) -> None:
    width = len(character.encode())
    text = character * (OUTPUT_CAP_BYTES // width)
    assert cap_output(text) == text

    longer = cap_output(text + "!")

    assert cut_bytes(longer) and longer.endswith(character + "!")
    assert OUTPUT_CAP_BYTES - width < len(longer.encode()) <= OUTPUT_CAP_BYTES


def test_cap_output_replaces_lone_surrogates_even_when_short() -> None:
    assert cap_output("ok \udcff\ud800 done") == "ok \ufffd\ufffd done"


# ------------------------------------------------------------ differential

_DUE = st.tuples(st.just("due"), st.integers(0, 90), st.integers(0, 3))
_FINISH = st.tuples(
    st.just("finish"), st.integers(0, 5), st.sampled_from(list(RunOutcome)), st.integers(-1, 3)
)
OPERATIONS = st.lists(
    st.one_of(
        _DUE,
        _FINISH,
        _DUE,
        _FINISH,
        st.tuples(st.just("add"), st.integers(0, 5), st.integers(1, 2)),
        st.tuples(st.just("start"), st.integers(0, 5)),
        st.tuples(
            st.sampled_from(["cancel", "remove", "run_now", "pause", "resume"]),
            st.integers(0, 20),
        ),
    ),
    min_size=5,
    max_size=60,
)


def _palette() -> list[TaskSpec]:
    return [
        make_spec(0, retry=fixed_retry(3, delay=15)),
        make_spec(0, recurrence=Every(timedelta(seconds=20)), misfire=MisfirePolicy.SKIP),
        make_spec(
            0,
            recurrence=Every(timedelta(seconds=30)),
            overlap=OverlapPolicy.QUEUE,
            retry=fixed_retry(2, delay=5),
            concurrency_key="k",
        ),
        make_spec(0, recurrence=Every(timedelta(seconds=7)), misfire_grace=timedelta(0)),
        make_spec(0, concurrency_key="k", priority=5, first_run_at=at(40)),
        make_spec(0, recurrence=Every(timedelta(seconds=10)), misfire=MisfirePolicy.RUN_ALL),
    ]


def _comparable(run: RunRecord) -> RunRecord:
    # The two implementations word the reason of a skip differently ("(misfire)" vs a
    # sentence); the count before it is the contract.
    if run.outcome is RunOutcome.MISSED and run.error is not None:
        return replace(run, error=run.error.split(" (")[0])
    return run


@settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow],
)
@given(operations=OPERATIONS)
def test_both_repositories_store_the_same_thing(operations: list[tuple[object, ...]]) -> None:
    """One engine's events, applied to both implementations, read back identically."""
    with tempfile.TemporaryDirectory() as folder:
        memory = MemoryRepository(history_limit=3)
        sqlite = SqliteRepository(Path(folder) / "diff.sqlite3", history_limit=3)
        try:
            _run_differential(operations, memory, sqlite)
        finally:
            sqlite.close()


def _run_differential(
    operations: list[tuple[object, ...]], memory: MemoryRepository, sqlite: SqliteRepository
) -> None:
    engine = Engine()
    palette = _palette()
    now = T0
    known: list[int] = []
    operations = [("add", 0, 2), ("add", 2, 2), ("add", 4, 2), *operations]
    for operation in operations:
        name = operation[0]
        events: list[Event] = []
        results: dict[int, RunResult] = {}
        if name == "add":
            specs = [palette[(int(cast(int, operation[1])) + i) % len(palette)] for i in range(2)]
            specs = specs[: int(cast(int, operation[2]))]
            added = memory.add_tasks(specs, now)
            assert sqlite.add_tasks(specs, now) == added
            for spec in added:
                events += engine.add(spec)
                known.append(spec.id)
        elif name == "due":
            now += timedelta(seconds=int(cast(int, operation[1])))
            events += engine.due(now, int(cast(int, operation[2])))
        elif name in ("finish", "start"):
            running = sorted(engine.running_runs)
            if not running:
                continue
            run_id = running[int(cast(int, operation[1])) % len(running)]
            now += timedelta(seconds=1)
            if name == "start":
                events += engine.started(run_id, now)
            else:
                code = int(cast(int, operation[3]))
                if code >= 0:
                    results[run_id] = RunResult(exit_code=code, error=f"e{code}", output="o" * code)
                events += engine.finished(run_id, cast(RunOutcome, operation[2]), now)
        else:
            if not known:
                continue
            task_id = known[int(cast(int, operation[1])) % len(known)]
            try:
                if name == "run_now":
                    events += engine.run_now(task_id, now)
                else:
                    events += getattr(engine, cast(str, name))(task_id)
            except (InvalidStateError, TaskNotFoundError):
                continue
        memory.apply(events, now, results)
        sqlite.apply(events, now, results)

    mem_tasks = [stored(task) for task in memory.load(now).tasks]
    assert sqlite.load(now).tasks == mem_tasks
    assert mem_tasks == [stored(task) for task in engine.snapshots()]
    for state in TaskState:
        assert [task.id for task in sqlite.list_tasks(state)] == [
            task.id for task in memory.list_tasks(state)
        ]
    runs = [run for task_id in known for run in memory.runs(task_id)]
    event(f"runs recorded: {'none' if not runs else 'few' if len(runs) < 5 else 'many'}")
    event(f"outcomes seen: {len({run.outcome for run in runs})}")
    if any(len(memory.runs(task_id)) >= 3 for task_id in known):
        event("history pruned to its limit")
    if len(mem_tasks) < len(known):
        event("a task was removed")
    for task_id in known:
        assert [_comparable(r) for r in sqlite.runs(task_id)] == [
            _comparable(r) for r in memory.runs(task_id)
        ], task_id
        finished = [r.outcome for r in sqlite.runs(task_id) if r.outcome is not None]
        missed = finished.count(RunOutcome.MISSED)
        assert missed <= 3 and len(finished) - missed <= 3  # each kept to the limit
    assert sqlite.interrupt_open_runs(now) == memory.interrupt_open_runs(now)
    for task in mem_tasks:
        assert persistent(task.status) == sqlite.get(task.id).status


def test_last_runs_gives_each_tasks_latest_finished_run(repository: TaskRepository) -> None:
    engine = Engine()
    specs = repository.add_tasks([make_spec(0), make_spec(0), make_spec(0)], T0)
    for spec in specs:
        engine.add(spec)
    events = engine.due(T0, 3)
    repository.apply(events, T0)
    tickets = {e.run.task_id: e.run for e in events if isinstance(e, RunDispatched)}
    first, second, _ = specs
    for spec, outcome in ((first, RunOutcome.FAILED), (second, RunOutcome.SUCCEEDED)):
        repository.apply(engine.finished(tickets[spec.id].run_id, outcome, T0), T0)
    latest = repository.last_runs()
    assert set(latest) == {first.id, second.id}  # the third is still running
    assert latest[first.id].outcome is RunOutcome.FAILED
    assert latest[second.id].outcome is RunOutcome.SUCCEEDED


def test_pids_written_with_the_events_of_one_transaction(driver: Driver) -> None:
    """The scheduler's group commit: the pids of runs that started and the ends of runs
    that finished (even the same run's) go in one ``apply``; a pid alone too."""
    first, second = driver.add_one(make_spec(0)), driver.add_one(make_spec(1))
    ticket_a, ticket_b = driver.due(at(0), workers=2)
    driver.repository.apply([], at(1), pids={ticket_a.run_id: 4242})
    ended = driver.engine.finished(ticket_b.run_id, RunOutcome.SUCCEEDED, at(2))
    driver.repository.apply(
        ended, at(2), {ticket_b.run_id: RunResult(exit_code=0)}, pids={ticket_b.run_id: 4343}
    )
    runs = {
        ticket.task_id: driver.repository.runs(ticket.task_id)[0] for ticket in (ticket_a, ticket_b)
    }
    assert (runs[ticket_a.task_id].pid, runs[ticket_a.task_id].outcome) == (4242, None)
    assert (runs[ticket_b.task_id].pid, runs[ticket_b.task_id].outcome) == (
        4343,
        RunOutcome.SUCCEEDED,
    )
    assert {first, second} == {ticket_a.task_id, ticket_b.task_id}
