"""The README's screenshot of the task dialog's "Run after" section.

Usage (under an X server, e.g. ``Xvfb :97 -screen 0 1400x1000x24 &``):

    DISPLAY=:97 python scripts/screenshot_run_after.py [docs/screenshots/task-dialog-run-after.png]

Builds the real dialog over a few demo tasks (nothing is read or written but the
PNG), opens "Run after" with two upstreams, and grabs the window from the screen
(``QScreen.grabWindow``), frame and all, as a person sees it.
"""

from __future__ import annotations

import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from PySide6.QtCore import QEventLoop, QTimer
from PySide6.QtWidgets import QApplication

from taskgui.core.clock import FakeClock
from taskgui.core.dependencies import After, Upstream
from taskgui.core.recurrence import Cron
from taskgui.core.status import TaskSnapshot, TaskStatus
from taskgui.core.task import Command, TaskSpec
from taskgui.ui.task_dialog.dialog import DialogMode, TaskDialog

NOW = datetime(2026, 12, 1, 17, 0, tzinfo=UTC)


def _task(task_id: int, name: str, line: str, **more: Any) -> TaskSpec:
    fields: dict[str, Any] = {"first_run_at": NOW, **more}
    return TaskSpec(id=task_id, name=name, command=Command(line=line), **fields)


def _settle(ms: int = 400) -> None:
    loop = QEventLoop()
    QTimer.singleShot(ms, loop.quit)
    loop.exec()


def main(out: Path) -> int:
    app = QApplication(sys.argv[:1])
    nightly = Cron("30 2 * * *", "Europe/Berlin")
    tasks = [
        _task(1, "Fetch the day's data", "./fetch.sh", recurrence=nightly),
        _task(2, "Build the report", "make report", recurrence=nightly),
        _task(3, "Clean the cache", "rm -rf ~/.cache/report"),
    ]
    upload = _task(
        4,
        "Upload the report",
        "rsync -a report/ server:/srv/reports/",
        after=(Upstream(1), Upstream(2, After.FINISHED)),
        only_after=True,
        first_run_at=NOW + timedelta(hours=1),
    )
    snapshots = [TaskSnapshot(spec, TaskStatus()) for spec in [*tasks, upload]]
    dialog = TaskDialog(FakeClock(NOW), spec=upload, mode=DialogMode.EDIT, tasks=snapshots)
    dialog.run_after.task_picker.setCurrentIndex(dialog.run_after.task_picker.findData(3))
    dialog.resize(1100, 720)
    dialog.show()
    _settle(800)
    screen = dialog.screen()
    frame = dialog.frameGeometry()
    image = screen.grabWindow(0, frame.x(), frame.y(), frame.width(), frame.height())
    out.parent.mkdir(parents=True, exist_ok=True)
    if not image.save(str(out)):
        print(f"could not write {out}", file=sys.stderr)
        return 1
    print(out)
    dialog.close()
    app.quit()
    return 0


if __name__ == "__main__":
    target = sys.argv[1] if len(sys.argv) > 1 else "docs/screenshots/task-dialog-run-after.png"
    raise SystemExit(main(Path(target)))
