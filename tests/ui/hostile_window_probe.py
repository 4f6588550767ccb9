"""The window, used the way a person would, on a task whose text is an ``<img>`` tag.

Run as ``python -m tests.ui.hostile_window_probe FOLDER IMAGE`` (offscreen Qt): it
opens the real window on a database in FOLDER with a task whose name and command are
``<img src=IMAGE>``, hovers the task's cells so their tooltips are shown, opens the
task's history, and deletes the task through the real confirmation box (answering
Yes). It prints ``deleted`` and exits 0 when the task is gone.

Where that text is taken for HTML, Qt loads IMAGE to draw it: the test makes IMAGE a
FIFO and watches whether anyone opens it (a read of ``/dev/zero`` would instead take
all memory, and a FIFO nobody writes to hangs the GUI thread for ever).
"""

from __future__ import annotations

import sys
from datetime import timedelta
from pathlib import Path

from PySide6.QtCore import QEvent, QTimer
from PySide6.QtGui import QHelpEvent
from PySide6.QtWidgets import QApplication, QMessageBox

from taskgui.core.clock import SystemClock
from taskgui.runtime.service import SchedulerService
from taskgui.store.sqlite.repository import SqliteRepository
from taskgui.ui.table.task_model import Column
from taskgui.ui.window.actions import Verb
from taskgui.ui.window.main_window import MainWindow
from tests.helpers.service import spec


def _hover(window: MainWindow, column: Column) -> None:
    """What the mouse resting on a cell does: a tooltip event to the table's viewport."""
    index = window.proxy.index(0, column)
    center = window.table.visualRect(index).center()
    viewport = window.table.viewport()
    QApplication.sendEvent(
        viewport, QHelpEvent(QEvent.Type.ToolTip, center, viewport.mapToGlobal(center))
    )
    QApplication.processEvents()


def _answer_yes() -> None:
    box = QApplication.activeModalWidget()
    if isinstance(box, QMessageBox) and box.isVisible():
        button = box.button(QMessageBox.StandardButton.Yes)
        if button is not None:
            button.click()
            return
    QTimer.singleShot(20, _answer_yes)


def main(folder: Path, image: str) -> int:
    app = QApplication([])
    clock = SystemClock()
    repository = SqliteRepository(folder / "probe.sqlite3")
    service = SchedulerService(repository, clock, workers=1)
    service.start()
    window = MainWindow(service, clock, location=str(folder))
    window.show()
    text = f"<img src={image}>"
    task = service.add_task(spec(text, text, first_run_at=clock.now() + timedelta(hours=1)))
    window.model.flush_pending()
    app.processEvents()
    for column in Column:
        _hover(window, column)
    window.show_history(task.id)
    app.processEvents()
    window.select_task(task.id)
    QTimer.singleShot(0, _answer_yes)
    window.actions_[Verb.DELETE].trigger()
    app.processEvents()
    gone = window.model.row_of(task.id) is None
    print("deleted" if gone else "still there", flush=True)
    window.close_for_quit()
    service.shutdown(0.0)
    repository.close()
    return 0 if gone else 1


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1]), sys.argv[2]))
