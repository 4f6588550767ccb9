"""The table's "run after" texts: "waiting for A", and a tooltip naming the tasks a row
runs after and before, with hostile names shown as plain text."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import Qt as GuiQt
from pytestqt.modeltest import ModelTester

from taskgui.core.dependencies import After, Upstream
from taskgui.core.engine.engine import Engine
from taskgui.core.events import RunDispatched, TaskChanged
from taskgui.core.states import RunOutcome
from taskgui.ui.plain_text import plain_tooltip
from taskgui.ui.table.task_model import Column, TaskTableModel
from tests.helpers.factories import T0, make_spec

HOSTILE = "<img src='/etc/passwd'><b>fetch</b>"


def _engine() -> Engine:
    engine = Engine()
    engine.add(make_spec(1, name=HOSTILE))
    engine.add(make_spec(2, name="build"))
    engine.add(
        make_spec(
            3,
            name="upload",
            after=(Upstream(1), Upstream(2, After.FINISHED)),
            only_after=True,
        )
    )
    return engine


def _cell(model: TaskTableModel, row: int, column: Column, role: Qt.ItemDataRole) -> str:
    return str(model.data(model.index(row, column), role))


def test_a_row_waiting_for_its_upstream_names_it(
    model: TaskTableModel, qtmodeltester: ModelTester
) -> None:
    engine = _engine()
    model.reset_tasks(list(engine.snapshots()), {})
    qtmodeltester.check(model)
    display = Qt.ItemDataRole.DisplayRole
    assert _cell(model, 2, Column.NEXT_RUN, display) == f"waiting for {HOSTILE} (1), build (2)"
    # A completes: only build is left to wait for.
    [run] = [e.run for e in engine.due(T0, 1) if isinstance(e, RunDispatched)]
    for event in engine.finished(run.run_id, RunOutcome.SUCCEEDED, T0):
        if isinstance(event, TaskChanged):
            model.on_task_changed(event.task)
    model.flush_pending()
    assert _cell(model, 2, Column.NEXT_RUN, display) == "waiting for build (2)"


def test_the_tooltip_names_upstream_and_downstream_as_plain_text(model: TaskTableModel) -> None:
    model.reset_tasks(list(_engine().snapshots()), {})
    tip = Qt.ItemDataRole.ToolTipRole
    upload = _cell(model, 2, Column.NAME, tip)
    expected = f"Runs after {HOSTILE} (1) succeeds, after build (2) finishes (all of them)"
    assert upload == plain_tooltip(f"true\n\n{expected}; no schedule of its own")
    # Qt would not take it for markup, or it comes escaped: shown as the characters.
    assert not GuiQt.mightBeRichText(upload) or "&lt;img" in upload
    assert _cell(model, 1, Column.NAME, tip) == plain_tooltip("true\n\nRuns before: upload (3)")
    assert _cell(model, 2, Column.STATE, tip) == plain_tooltip(
        f"waiting for {HOSTILE} (1), build (2)"
    )
