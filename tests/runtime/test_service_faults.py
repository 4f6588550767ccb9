"""One bad task or request never stops a start or the schedule.

Real database files and a real event loop. Before these fixes a task stored with a
999999999-day interval or retry delay made every start fail with OverflowError; in a
running service the same values raised from Qt slots (pytest-qt fails a test on
that) and left the run "running" for ever; and a request row the service could not
read stopped it answering every later request.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, replace
from datetime import timedelta
from pathlib import Path

from pytestqt.qtbot import QtBot

from taskgui.control.recovery import Recovery
from taskgui.core.clock import SystemClock
from taskgui.core.engine.engine import Engine
from taskgui.core.operation import Op
from taskgui.core.recurrence import Every, EveryMode
from taskgui.core.retry import RetryPolicy
from taskgui.core.states import RunOutcome, TaskState
from taskgui.runtime.service import SchedulerService
from taskgui.store import codec
from taskgui.store.requests import encode_spec
from taskgui.store.sqlite.repository import SqliteRepository
from tests.helpers.service import spec
from tests.helpers.store import raw_connection

CLOCK = SystemClock()
HUGE_SECONDS = 999_999_999 * 86_400.0  # what 'taskgui add --every 999999999d' stored


@dataclass
class Started:
    service: SchedulerService
    errors: list[str]  # what it reported through error_occurred
    recovery: Recovery


@contextmanager
def service_on(db: Path, qtbot: QtBot) -> Iterator[Started]:
    """A started service over ``db``; stopped after."""
    repository = SqliteRepository(db)
    service = SchedulerService(repository, CLOCK, workers=2, kill_grace=0.3)
    errors: list[str] = []
    service.error_occurred.connect(errors.append)
    try:
        yield Started(service, errors, service.start())
    finally:
        with qtbot.waitSignal(service.stopped, timeout=10_000):
            service.shutdown(grace=0.0)
        service.pool.wait_for_done(5_000)
        repository.close()


def quarantined(db: Path) -> dict[int, str]:
    with raw_connection(db) as connection:
        return dict(connection.execute("SELECT task_id, error FROM quarantine").fetchall())


# ---------------------------------------------------------- stored before the bound


def stored_before_the_bound(db: Path) -> tuple[int, int, int]:
    """A good task due now; one stored with a 999999999-day interval; and one with a
    999999999-day retry delay, left running by a scheduler that died mid-run."""
    repository = SqliteRepository(db)
    good, interval, retried = repository.add_tasks(
        [
            spec("good", "true"),
            spec("interval", "true", recurrence=Every(timedelta(days=1))),
            spec("retried", "false", retry=RetryPolicy()),
        ],
        CLOCK.now(),
    )
    engine = Engine()
    engine.add(repository.get(retried.id).spec)
    repository.apply(engine.due(CLOCK.now(), 1), CLOCK.now())  # its run is open on disk
    repository.close()
    huge_every = {"v": 1, "kind": "every", "seconds": HUGE_SECONDS, "mode": "fixed_rate"}
    retry = json.loads(codec.encode_retry(RetryPolicy()))
    huge_retry = {**retry, "base": HUGE_SECONDS, "max": HUGE_SECONDS}
    with raw_connection(db) as other:
        other.execute(
            "UPDATE tasks SET recurrence = ? WHERE id = ?", (json.dumps(huge_every), interval.id)
        )
        other.execute(
            "UPDATE tasks SET retry = ? WHERE id = ?", (json.dumps(huge_retry), retried.id)
        )
    return good.id, interval.id, retried.id


def test_tasks_stored_before_the_bound_are_set_aside_and_the_start_goes_on(
    tmp_path: Path, qtbot: QtBot
) -> None:
    db = tmp_path / "taskgui.sqlite3"
    good, interval, retried = stored_before_the_bound(db)

    with service_on(db, qtbot) as started:
        service, errors = started.service, started.errors
        qtbot.waitUntil(lambda: service.task(good).state is TaskState.SUCCEEDED, timeout=10_000)
        # The running one was read at the start (and reported by it, see the daemon and
        # the window); the other when the rest of the schedule is read.
        assert [task.task_id for task in started.recovery.quarantined] == [retried]
        service.snapshot()
        qtbot.waitUntil(lambda: bool(errors), timeout=5_000)

    set_aside = quarantined(db)
    assert sorted(set_aside) == [interval, retried]
    assert "100 years" in set_aside[interval] and "100 years" in set_aside[retried]
    assert errors == [
        f"task {interval} could not be read from the database and was set aside: "
        "the stored schedule: field 'seconds': the repeat interval must be at most 100 years"
    ]
    repository = SqliteRepository(db)
    try:  # kept on disk, and its run no longer open
        assert [run.outcome for run in repository.runs(retried)] == [RunOutcome.INTERRUPTED]
        assert repository.get(good).state is TaskState.SUCCEEDED
    finally:
        repository.close()


# ------------------------------------------------------------ fails while running


def test_a_task_the_engine_fails_on_is_set_aside_with_its_run_recorded(
    tmp_path: Path, qtbot: QtBot
) -> None:
    db = tmp_path / "taskgui.sqlite3"
    # As a value from before the bound would be: it slipped past validation.
    poisoned = Every(timedelta(seconds=1), EveryMode.FIXED_DELAY)
    object.__setattr__(poisoned, "interval", timedelta(days=999_999_999))

    with service_on(db, qtbot) as started:
        service, errors = started.service, started.errors
        bad = service.add_task(spec("poisoned", "true", recurrence=poisoned))
        qtbot.waitUntil(lambda: bool(errors), timeout=10_000)
        later = service.add_task(spec("later", "true"))
        qtbot.waitUntil(lambda: service.task(later.id).state is TaskState.SUCCEEDED)
        history = service.history(bad.id)
        assert bad.id not in service.engine

    assert [run.outcome for run in history] == [RunOutcome.SUCCEEDED]  # not "running"
    assert errors == [
        f"task {bad.id} was set aside (kept in the database, left out of the schedule) "
        "because handling the end of its run failed (OverflowError: date value out of range)"
    ]
    assert list(quarantined(db)) == [bad.id]

    with service_on(db, qtbot) as started:  # the next start leaves it out
        assert bad.id not in started.service.engine
        assert started.service.task(later.id).state is TaskState.SUCCEEDED


# ----------------------------------------------------------------------- requests


def test_every_malformed_request_is_answered_and_those_after_it_too(
    tmp_path: Path, qtbot: QtBot
) -> None:
    db = tmp_path / "taskgui.sqlite3"
    with service_on(db, qtbot) as started:
        service = started.service
        mine = service.add_task(spec("mine", "true", first_run_at=CLOCK.now() + timedelta(hours=1)))
        other = service.add_task(
            spec("other", "true", first_run_at=CLOCK.now() + timedelta(hours=1))
        )
        now_us = codec.to_us(CLOCK.now())
        rows = [
            ("update", mine.id, '{"v": 1}', now_us),  # KeyError before
            ("update", mine.id, '{"v": 1, "row": 5}', now_us),  # TypeError before
            ("update", mine.id, "[" * 100_000 + "]" * 100_000, now_us),  # RecursionError
            ("pause", mine.id, None, "yesterday"),  # a time that is text
            ("pause", mine.id, None, 2**62),  # a time past the calendar
            ("pause", "one", None, now_us),
            (b"\xff", mine.id, None, now_us),  # bytes, where text belongs
            ("update", mine.id, encode_spec(replace(other, name="x")), now_us),
            ("pause", mine.id, None, now_us),  # a good one, after all of them
        ]
        with raw_connection(db) as sender:
            ids = [
                sender.execute(
                    "INSERT INTO requests (op, task_id, payload, created_at) VALUES (?, ?, ?, ?)",
                    row,
                ).lastrowid
                for row in rows
            ]

        def answers() -> list[tuple[object, object]]:
            with raw_connection(db) as reader:
                return reader.execute("SELECT done_at, error FROM requests ORDER BY id").fetchall()

        qtbot.waitUntil(lambda: all(done for done, _ in answers()), timeout=5_000)
        errors = [error for _, error in answers()]
        assert len(ids) == len(errors)
        assert errors[-1] is None and service.task(mine.id).state is TaskState.PAUSED
        assert service.task(other.id).spec.name == "other"  # not rewritten through mine
        expected = [
            "the request's definition is not a task's row",
            "the request's definition is not a task's row",
            "the request's definition is not readable JSON",
            "the request cannot be read: the request's time 'yesterday' is not a time",
            "the request cannot be read: the request's time 4611686018427387904 is outside",
            "the request cannot be read: the request names no valid task id ('one')",
            "the request cannot be read: unknown request b'\\xff'",
            f"the update of task {mine.id} carries the definition of task {other.id}; refused",
        ]
        for error, phrase in zip(errors, expected, strict=False):
            assert isinstance(error, str) and error.startswith(phrase), (error, phrase)


def test_a_start_with_an_unreadable_request_succeeds_and_answers_it(
    tmp_path: Path, qtbot: QtBot
) -> None:
    db = tmp_path / "taskgui.sqlite3"
    SqliteRepository(db).close()
    with raw_connection(db) as sender:
        for created_at in ("soon", 2**62, -(2**62)):
            sender.execute(
                "INSERT INTO requests (op, task_id, payload, created_at) VALUES ('pause', 1, "
                "NULL, ?)",
                (created_at,),
            )

    with service_on(db, qtbot) as started:
        assert started.service.snapshot() == []

    with raw_connection(db) as reader:
        answered = reader.execute("SELECT done_at IS NOT NULL, error FROM requests").fetchall()
    assert [done for done, _ in answered] == [1, 1, 1]
    assert all("the request cannot be read" in error for _, error in answered)


def test_a_request_filed_while_others_are_performed_is_not_missed(
    tmp_path: Path, qtbot: QtBot
) -> None:
    # A CLI that files its request while the service works through earlier ones (seen
    # under load in the e2e test: 'pause' timed out after 10 s). The service used to
    # read data_version again *after* performing, taking that commit for its own
    # answer, so nothing woke it for the new request until some later commit.
    db = tmp_path / "taskgui.sqlite3"
    with service_on(db, qtbot) as started:
        service = started.service
        later = CLOCK.now() + timedelta(hours=1)
        first = service.add_task(spec("first", "true", first_run_at=later))
        second = service.add_task(spec("second", "true", first_run_at=later))
        sender = SqliteRepository(db)
        perform = service._perform_request

        def perform_then_file_another(*args: object) -> str | None:
            answer = perform(*args)  # type: ignore[arg-type]
            if not sender_filed:
                sender_filed.append(sender.submit_request(Op.PAUSE, second.id, None, CLOCK.now()))
            return answer

        sender_filed: list[int] = []
        service._perform_request = perform_then_file_another  # type: ignore[method-assign,assignment]
        try:
            sender.submit_request(Op.PAUSE, first.id, None, CLOCK.now())
            qtbot.waitUntil(lambda: bool(sender_filed), timeout=5_000)
            qtbot.waitUntil(lambda: sender.request_outcome(sender_filed[0])[0], timeout=5_000)
        finally:
            sender.close()
        assert service.task(second.id).state is TaskState.PAUSED
