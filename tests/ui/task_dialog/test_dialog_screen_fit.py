"""The task dialog on a short screen: the form scrolls, Create and Cancel stay in view.

A trial opened Advanced and Conditions & spread on a screen 800 px high: the dialog
grew to some 1,240 px, Create/Cancel below the bottom edge; at 640 x 400 the fields
were squashed instead. The default offscreen screen is 800 x 800; the 640 x 400 one
needs a process of its own (``screen_fit_probe``), as a screen's size is fixed when
QApplication starts.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QPoint, QRect, Qt
from PySide6.QtWidgets import QDialogButtonBox
from pytestqt.qtbot import QtBot

from taskgui.core.clock import FakeClock
from taskgui.ui.task_dialog.dialog import TaskDialog
from tests.ui.task_dialog.screen_fit_probe import NOW, open_long_dialog, report

ROOT = Path(__file__).resolve().parents[3]

# The offscreen platform says this whenever a shown window's size limits change.
pytestmark = pytest.mark.qt_log_ignore(r"This plugin does not support propagateSizeHints\(\)")


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock(NOW)


def _show(qtbot: QtBot, dialog: TaskDialog) -> TaskDialog:
    qtbot.addWidget(dialog)
    dialog.show()
    qtbot.waitExposed(dialog)
    return dialog


def _judge(measured: dict[str, object]) -> None:
    available = measured["available"]
    frame = measured["frame"]
    assert isinstance(available, list) and isinstance(frame, list)
    assert frame[1] <= available[1], measured
    assert frame[0] <= available[0], measured
    assert measured["buttons_seen"] is True, measured
    assert measured["squashed"] == [], measured


def test_the_long_dialog_fits_a_screen_800_px_high(qtbot: QtBot, clock: FakeClock) -> None:
    dialog = _show(qtbot, open_long_dialog(clock))
    assert dialog.screen().availableGeometry().height() == 800  # the offscreen default
    _judge(report(dialog))


def _probe(tmp_path: Path, screens: list[dict[str, object]], *args: str) -> dict[str, Any]:
    """The probe's report, in a process of its own on these offscreen screens."""
    config = tmp_path / "screens.json"
    config.write_text(
        json.dumps({"screens": [{**screen, "logicalDpi": 96, "dpr": 1} for screen in screens]})
    )
    probe = subprocess.run(
        [sys.executable, "-m", "tests.ui.task_dialog.screen_fit_probe", *args],
        cwd=ROOT,
        env={
            **os.environ,
            "PYTHONPATH": str(ROOT),
            "QT_QPA_PLATFORM": f"offscreen:configfile={config}",
        },
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert probe.returncode == 0, probe.stderr
    measured: dict[str, Any] = json.loads(probe.stdout)
    return measured


def test_the_long_dialog_fits_a_640_by_400_screen_without_squashing(tmp_path: Path) -> None:
    small = {"name": "small", "x": 0, "y": 0, "width": 640, "height": 400}
    measured = _probe(tmp_path, [small])
    assert measured["available"] == [640, 400]  # the probe did get the small screen
    _judge(measured)


def test_the_dialog_fits_the_smaller_screen_its_window_is_on(tmp_path: Path) -> None:
    """A review: over a window on a small second screen the dialog was sized for the
    big primary one (its handle is there at its first show): 1050 px on 500."""
    big = {"name": "big", "x": 0, "y": 0, "width": 1920, "height": 1400}
    small = {"name": "small", "x": 1920, "y": 0, "width": 900, "height": 500}
    measured = _probe(tmp_path, [big, small], "--over", "1940,20")
    assert measured["available"] == [900, 500]  # it opened on its window's screen
    _judge(measured)


def test_opening_the_sections_grows_the_dialog_up_to_the_screen_only(
    qtbot: QtBot, clock: FakeClock
) -> None:
    dialog = _show(qtbot, TaskDialog(clock))
    closed = dialog.height()
    dialog.advanced.set_expanded(True)
    assert dialog.height() > closed  # the room there is, is used to show the section
    dialog.rules.set_expanded(True)
    _judge(report(dialog))
    dialog.rules.set_expanded(False)
    _judge(report(dialog))  # folding in leaves the buttons where they were


def test_a_field_below_the_fold_scrolls_into_view_when_it_gets_the_focus(
    qtbot: QtBot, clock: FakeClock
) -> None:
    """Shift+Tab from Cancel (Create is off: the form is empty) goes to the form's last
    field, at its bottom: a Tab from outside the scroll area, which QScrollArea alone
    leaves out of view."""
    dialog = _show(qtbot, open_long_dialog(clock))
    last = dialog.run_after.toggle
    viewport = dialog.form_scroll.viewport()

    def in_view() -> bool:
        corner = last.mapTo(viewport, QPoint(0, 0))
        return viewport.rect().contains(QRect(corner, last.size()))

    assert not in_view()  # the test means something: it starts below the fold
    cancel = dialog.buttons.button(QDialogButtonBox.StandardButton.Cancel)
    assert cancel is not None and not dialog.ok_button.isEnabled()
    dialog.activateWindow()
    cancel.setFocus()
    qtbot.waitUntil(cancel.hasFocus)
    qtbot.keyClick(cancel, Qt.Key.Key_Backtab, Qt.KeyboardModifier.ShiftModifier)
    assert last.hasFocus()
    qtbot.waitUntil(in_view)
