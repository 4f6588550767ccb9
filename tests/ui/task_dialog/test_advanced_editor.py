"""The Advanced section of the task dialog: what its choices say they do."""

from __future__ import annotations

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from taskgui.core.engine.engine import DEFAULT_RUN_ALL_LIMIT
from taskgui.core.states import MisfirePolicy, OverlapPolicy
from taskgui.ui.task_dialog.advanced_editor import AdvancedEditor


def test_the_misfire_choices_say_what_happens_after_a_pause(qtbot: QtBot) -> None:
    # Resume runs (or skips) what a task missed while paused: that is the misfire
    # policy, so the field and each of its choices must say so, not only "computer off".
    editor = AdvancedEditor()
    qtbot.addWidget(editor)
    combo = editor.misfire

    field_tip = combo.toolTip()
    assert "paused" in field_tip and "Resume" in field_tip and "slept" in field_tip
    tips = {
        MisfirePolicy(combo.itemData(index)): combo.itemData(index, Qt.ItemDataRole.ToolTipRole)
        for index in range(combo.count())
    }
    assert set(tips) == set(MisfirePolicy)
    assert all(tip.startswith("After sleep, downtime or a pause: ") for tip in tips.values())
    assert tips[MisfirePolicy.RUN_ALL].endswith(f"up to {DEFAULT_RUN_ALL_LIMIT}")


def test_overlap_skip_says_a_run_all_catch_up_still_runs(qtbot: QtBot) -> None:
    editor = AdvancedEditor()
    qtbot.addWidget(editor)
    combo = editor.overlap
    index = combo.findData(OverlapPolicy.SKIP.value)

    tip = combo.itemData(index, Qt.ItemDataRole.ToolTipRole)

    assert "skip this run" in tip and "'run all' catch-up still runs every missed one" in tip
