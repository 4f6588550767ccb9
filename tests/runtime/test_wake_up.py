"""A calm wake-up in the running service: a FakeClock jump of 8 hours and 14 due runs,
and the same through logind's PrepareForSleep on a private bus with a fake logind.

Real SQLite file, real commands. The service's timer looks at the fake clock when its
Qt timer fires; the first task is due a fraction of a second after the start, so the
timer looks soon after the jump and sees the wall clock 8 hours ahead.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from pytestqt.qtbot import QtBot

from taskgui.core.clock import FakeClock
from taskgui.core.recurrence import Every
from taskgui.core.retry import RetryPolicy
from taskgui.core.states import RunOutcome, TaskState, WaitReason
from taskgui.core.task import Command, TaskSpec
from taskgui.core.wake import WakeAnswer, WakeQuestion, parse_wake_policy
from taskgui.runtime.conditions.sleep_watch import SleepWatch
from taskgui.runtime.service import SchedulerService
from taskgui.store.sqlite.repository import SqliteRepository
from tests.helpers.private_bus import FakeDesktopServices, connect, private_bus

HOUR = timedelta(hours=1)
TEN = timedelta(minutes=10)
WAIT_MS = 10_000


class Sleeper:
    """A service on a FakeClock over a real file, with 14 hourly tasks."""

    def __init__(
        self, path: Path, qtbot: QtBot, policy: str, *, can_ask: bool = True, soon: bool = True
    ) -> None:
        self.path = path
        self.qtbot = qtbot
        self.clock = FakeClock(datetime.now(UTC).replace(microsecond=0))
        self.policy = parse_wake_policy(policy)
        self.can_ask = can_ask
        self.dispatched: list[int] = []
        self.finished: list[int] = []
        self.questions: list[WakeQuestion] = []
        self.errors: list[str] = []
        self.repository = SqliteRepository(path)
        self.service = self._start()
        start = self.clock.now()
        self.ids = [
            self.service.add_task(
                TaskSpec(
                    name=f"<b>night job {i}</b>",
                    command=Command(line="true"),
                    # The first soon (the timer looks then), the rest during the night.
                    first_run_at=start + (timedelta(seconds=0.3) if i == 1 and soon else TEN * i),
                    recurrence=Every(HOUR),
                    priority=i % 4,
                    retry=RetryPolicy.no_retry(),
                )
            ).id
            for i in range(1, 15)
        ]

    def _start(self) -> SchedulerService:
        service = SchedulerService(
            self.repository, self.clock, workers=16, kill_grace=0.3, dispatch_ahead=0.0
        )
        service.set_wake_policy(self.policy, can_ask=self.can_ask)
        service.run_started.connect(lambda ticket: self.dispatched.append(ticket.task_id))
        service.run_finished.connect(lambda ticket, *_: self.finished.append(ticket.task_id))
        service.wake_asked.connect(self.questions.append)
        service.error_occurred.connect(self.errors.append)
        service.start()
        return service

    def sleep(self, hours: float = 8) -> datetime:
        """The machine sleeps: the wall clock moves on, the monotonic one does not."""
        return self.clock.jump_wall(timedelta(hours=hours))

    def starts(self) -> dict[int, datetime]:
        return {s.spec.id: s.status.next_run_at for s in self.repository.list_tasks()}  # type: ignore[misc]

    def restart(self) -> None:
        self.stop()
        self.repository = SqliteRepository(self.path)
        self.service = self._start()

    def stop(self) -> None:
        with self.qtbot.waitSignal(self.service.stopped, timeout=WAIT_MS):
            self.service.shutdown(grace=0.0)
        self.service.pool.wait_for_done(5_000)
        self.repository.close()


@pytest.fixture
def sleepers(tmp_path: Path, qtbot: QtBot) -> Iterator[list[Sleeper]]:
    made: list[Sleeper] = []
    yield made
    for sleeper in made:
        if not sleeper.service.signalsBlocked():
            sleeper.stop()
        assert sleeper.errors == []


def _sleeper(
    sleepers: list[Sleeper], tmp_path: Path, qtbot: QtBot, policy: str, **kw: bool
) -> Sleeper:
    sleeper = Sleeper(tmp_path / f"wake{len(sleepers)}.sqlite3", qtbot, policy, **kw)
    sleepers.append(sleeper)
    return sleeper


def test_spread_starts_one_now_and_commits_the_rest_over_ten_minutes(
    sleepers: list[Sleeper], tmp_path: Path, qtbot: QtBot
) -> None:
    s = _sleeper(sleepers, tmp_path, qtbot, "spread:10m")
    woke = s.sleep(8)
    qtbot.waitUntil(lambda: len(s.finished) == 1, timeout=WAIT_MS)
    first = s.finished[0]
    assert s.service.task(first).spec.priority == 3  # the most urgent went first
    starts = s.starts()
    later = sorted(at for task_id, at in starts.items() if task_id != first)
    assert later == [woke + TEN * i / 14 for i in range(1, 14)]
    qtbot.wait(300)
    assert s.finished == [first]  # the others wait for their starts
    # A restart keeps the committed starts (no second spread).
    s.restart()
    assert {k: v for k, v in s.starts().items() if k != first} == {
        k: v for k, v in starts.items() if k != first
    }
    # Each runs at its start, in the order of the spread, not judged late again.
    order = sorted((at, task_id) for task_id, at in starts.items() if task_id != first)
    for at, task_id in order:
        s.clock.advance(at - s.clock.now())
        s.service.set_workers(16)  # a public change that dispatches (the timer waits longer)
        qtbot.waitUntil(lambda: task_id in s.finished, timeout=WAIT_MS)  # noqa: B023
    ran = list(dict.fromkeys(s.finished))
    assert ran == [first] + [task_id for _, task_id in order]
    priorities = [s.service.task(task_id).spec.priority for task_id in ran]
    assert priorities == sorted(priorities, reverse=True)
    # What the sleep missed is recorded once per task, at the wake-up.
    for task_id in s.ids:
        at_wake = [
            run for run in s.repository.runs(task_id, 50)
            if run.outcome is RunOutcome.MISSED and run.finished_at == woke
        ]  # fmt: skip
        assert len(at_wake) == 1


def test_run_now_starts_all_fourteen_at_once(
    sleepers: list[Sleeper], tmp_path: Path, qtbot: QtBot
) -> None:
    s = _sleeper(sleepers, tmp_path, qtbot, "now")
    s.sleep(8)
    qtbot.waitUntil(lambda: len(s.finished) == 14, timeout=WAIT_MS)
    assert sorted(s.finished) == sorted(s.ids)


def test_ask_waits_for_the_answer_then_does_what_it_says(
    sleepers: list[Sleeper], tmp_path: Path, qtbot: QtBot
) -> None:
    s = _sleeper(sleepers, tmp_path, qtbot, "ask")
    s.sleep(8)
    qtbot.waitUntil(lambda: len(s.questions) == 1, timeout=WAIT_MS)
    assert s.questions[0].count == 14
    assert s.questions[0].text == "14 runs were missed while the computer slept"
    qtbot.wait(300)
    assert s.dispatched == []
    assert {s.service.task(i).status.waiting for i in s.ids} == {WaitReason.WAKE_ANSWER}
    s.service.answer_wake(WakeAnswer.NOW)
    qtbot.waitUntil(lambda: len(s.finished) == 14, timeout=WAIT_MS)
    assert len(s.questions) == 1  # asked once


def test_ask_answered_skip_records_each_as_missed_with_the_reason(
    sleepers: list[Sleeper], tmp_path: Path, qtbot: QtBot
) -> None:
    s = _sleeper(sleepers, tmp_path, qtbot, "ask")
    woke = s.sleep(8)
    qtbot.waitUntil(lambda: len(s.questions) == 1, timeout=WAIT_MS)
    s.service.answer_wake(WakeAnswer.SKIP)
    qtbot.wait(300)
    assert s.dispatched == []
    for task_id in s.ids:
        runs = s.repository.runs(task_id, 5)
        assert any("skipped when it woke" in (run.error or "") for run in runs)
        assert s.service.task(task_id).state is TaskState.PENDING
        assert s.service.task(task_id).status.next_run_at > woke  # type: ignore[operator]


def test_headless_ask_spreads(sleepers: list[Sleeper], tmp_path: Path, qtbot: QtBot) -> None:
    s = _sleeper(sleepers, tmp_path, qtbot, "ask", can_ask=False)
    woke = s.sleep(8)
    qtbot.waitUntil(lambda: len(s.finished) == 1, timeout=WAIT_MS)
    assert s.questions == []
    later = [at for task_id, at in s.starts().items() if task_id != s.finished[0]]
    assert max(later) == woke + TEN * 13 / 14


def test_logind_prepare_for_sleep_takes_the_same_path(
    sleepers: list[Sleeper], tmp_path: Path, qtbot: QtBot
) -> None:
    with private_bus() as address:
        logind = FakeDesktopServices(address, ["logind"])
        try:
            # Nothing due for ten minutes: the timer waits a minute before it looks
            # again, so only logind can tell the service of the wake-up in time.
            s = _sleeper(sleepers, tmp_path, qtbot, "ask", soon=False)
            assert s.service.watch_sleep(SleepWatch(connect(address)))
            logind.command("sleep true")
            s.clock.jump_wall(timedelta(hours=8))
            logind.command("sleep false")
            qtbot.waitUntil(lambda: len(s.questions) == 1, timeout=WAIT_MS)
            assert s.questions[0].count == 14
            qtbot.wait(300)
            assert s.dispatched == []
            # A second notice of the same wake-up (the clock's, later) changes nothing
            # and asks nothing again.
            s.service._on_timer_clock_jumped(8 * 3600.0)
            qtbot.wait(100)
            assert len(s.questions) == 1 and s.dispatched == []
            s.service.answer_wake(WakeAnswer.SPREAD, TEN)
            qtbot.waitUntil(lambda: len(s.finished) == 1, timeout=WAIT_MS)
        finally:
            logind.stop()


def test_a_short_clock_step_is_not_a_wake_up(
    sleepers: list[Sleeper], tmp_path: Path, qtbot: QtBot
) -> None:
    s = _sleeper(sleepers, tmp_path, qtbot, "ask")
    s.clock.jump_wall(timedelta(seconds=30))  # an NTP step, not a sleep
    qtbot.waitUntil(lambda: len(s.finished) == 1, timeout=WAIT_MS)
    assert s.questions == []
