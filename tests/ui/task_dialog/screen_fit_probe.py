"""What a person sees of the task dialog opened with its two long sections open.

``report`` measures an open dialog: its height against the screen's available height,
whether Create and Cancel are inside the part of the dialog on the screen, and which
fields got less height than they need. Run as ``python -m
tests.ui.task_dialog.screen_fit_probe`` (offscreen Qt, ``configfile=`` naming the
screen), it opens the dialog and prints that report as JSON: a screen's size is fixed
when QApplication starts, so a screen other than the default 800 x 800 needs a process
of its own.
"""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime

from PySide6.QtCore import QPoint, QRect
from PySide6.QtWidgets import QApplication, QDialogButtonBox, QMainWindow, QWidget

from taskgui.core.clock import FakeClock
from taskgui.ui.task_dialog.dialog import TaskDialog

NOW = datetime(2026, 1, 1, 12, tzinfo=UTC)


def open_long_dialog(clock: FakeClock, parent: QWidget | None = None) -> TaskDialog:
    """The dialog as the trial had it: Advanced and Conditions & spread open."""
    dialog = TaskDialog(clock, parent)
    dialog.advanced.set_expanded(True)
    dialog.rules.set_expanded(True)
    return dialog


def _global_rect(widget: QWidget) -> QRect:
    return QRect(widget.mapToGlobal(QPoint(0, 0)), widget.size())


def _is_field(widget: QWidget) -> bool:
    """A field, label or button of the form (named by taskgui; Qt's own parts start
    with ``qt_``) that is shown. Not the area the form scrolls in: short is its job."""
    name = widget.objectName()
    return (
        bool(name)
        and not name.startswith("qt_")
        and name != "form_scroll"
        and widget.isVisibleTo(widget.window())
    )


def _needed_height(widget: QWidget) -> int:
    """The height the widget asks for (its size hint: a field is not squashed below what
    it would like, the form scrolls instead), unless it was made shorter on purpose (a
    maximum height, as the few-line text boxes have) or taller (a minimum height)."""
    hint = min(widget.sizeHint().height(), widget.maximumHeight())
    return max(hint, widget.minimumHeight())


def report(dialog: TaskDialog) -> dict[str, object]:
    """The measures the tests judge (JSON-ready: the probe prints it)."""
    available = dialog.screen().availableGeometry()
    frame = dialog.frameGeometry()
    # The part of the dialog a person can see: its own rect, cut by the screen's.
    seen = _global_rect(dialog).intersected(available)
    cancel = dialog.buttons.button(QDialogButtonBox.StandardButton.Cancel)
    buttons = [dialog.ok_button, cancel]
    squashed = sorted(
        f"{widget.objectName()}: {widget.height()} < {_needed_height(widget)}"
        for widget in dialog.findChildren(QWidget)
        if _is_field(widget) and widget.height() < _needed_height(widget)
    )
    return {
        "available": [available.width(), available.height()],
        "frame": [frame.width(), frame.height()],
        "buttons_seen": all(
            button is not None and button.isVisible() and seen.contains(_global_rect(button))
            for button in buttons
        ),
        "squashed": squashed,
    }


def main() -> int:
    """``--over X,Y``: open it over a main window placed there (on another screen)."""
    app = QApplication([])
    parent = None
    if len(sys.argv) > 2 and sys.argv[1] == "--over":
        x, y = (int(part) for part in sys.argv[2].split(","))
        parent = QMainWindow()
        parent.resize(600, 300)
        parent.move(QPoint(x, y))
        parent.show()
        app.processEvents()
    dialog = open_long_dialog(FakeClock(NOW), parent)
    dialog.show()
    app.processEvents()
    print(json.dumps(report(dialog)), flush=True)
    dialog.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
