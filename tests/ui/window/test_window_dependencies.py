"""The window and "run after", end to end over the real service: a chain runs in order,
and deleting or cancelling a task others run after asks first, naming them."""

from __future__ import annotations

from datetime import timedelta

from pytestqt.qtbot import QtBot

from taskgui.core.dependencies import Upstream
from taskgui.core.states import TaskState
from taskgui.ui.table.task_model import Column
from taskgui.ui.window.actions import Verb
from taskgui.ui.window.main_window import MainWindow
from tests.helpers.service import CLOCK, spec
from tests.ui.window.test_main_window import Confirmations, state_of, wait_state
from tests.ui.window.test_main_window import confirm as confirm  # noqa: PLC0414
from tests.ui.window.test_main_window import window as window  # noqa: PLC0414

LATER = CLOCK.now() + timedelta(hours=1)


def test_a_task_after_another_runs_once_it_succeeds(window: MainWindow, qtbot: QtBot) -> None:
    first = window.service.add_task(spec("first", "true"))
    second = window.service.add_task(
        spec("second", "true", after=(Upstream(first.id),), only_after=True)
    )
    wait_state(qtbot, window, first.id, TaskState.SUCCEEDED)

    def second_ran() -> bool:
        snapshot = window.model.snapshot_of(second.id)
        return snapshot is not None and snapshot.status.last_outcome is not None

    qtbot.waitUntil(second_ran, timeout=10_000)
    window.model.flush_pending()
    row = window.model.row_of(second.id)
    assert row is not None
    text = window.model.data(window.model.index(row, Column.NEXT_RUN))
    assert text == "waiting for first (1)"
    assert state_of(window, second.id) is TaskState.PENDING


def test_deleting_an_upstream_asks_naming_who_waits(
    window: MainWindow, qtbot: QtBot, confirm: Confirmations
) -> None:
    first = window.service.add_task(spec("first", "true", first_run_at=LATER))
    window.service.add_task(
        spec("<b>second</b>", "true", after=(Upstream(first.id),), only_after=True)
    )
    window.model.flush_pending()
    window.select_task(first.id)
    confirm.answer = False
    window.actions_[Verb.CANCEL].trigger()
    assert "These tasks run after it, and they would wait" in confirm.asked[-1]
    assert state_of(window, first.id) is TaskState.PENDING
    window.actions_[Verb.DELETE].trigger()
    assert "first" in confirm.asked[-1] and "<b>second</b>" in confirm.asked[-1]
    assert "wait for it for ever" in confirm.asked[-1]
    assert window.model.row_of(first.id) is not None
