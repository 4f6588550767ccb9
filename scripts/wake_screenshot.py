"""The calm wake-up's question, as the window shows it: docs/screenshots/wake-prompt.png.

Usage (under an X server; nothing of yours is read or written, every XDG folder and the
database are temporary):

    Xvfb :98 -screen 0 1400x1000x24 &
    DISPLAY=:98 python scripts/wake_screenshot.py [--out docs/screenshots]

The real scheduler, window and prompt on a fake clock: 14 hourly tasks, then the wall
clock jumps 8 hours ahead of the monotonic one (a night asleep), the service notices it
as it would after a suspend, holds the catch-ups ("ask") and the window asks. The whole
screen is grabbed (``QScreen.grabWindow``), so the prompt is seen over the window.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NAMES = [
    "Nightly backup", "Fetch mail", "Sync photos", "Rotate logs", "Upload report",
    "Index documents", "Check certificates", "Mirror repository", "Vacuum database",
    "Pull feeds", "Update dependencies", "Send digest", "Clean downloads", "Scan inbox",
]  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="taskgui-wake-shot-"))
    for name in ("XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"):
        os.environ[name] = str(home / name.lower())
    return shoot(args.out, home / "wake.sqlite3")


def shoot(out: Path, database: Path) -> int:
    from PySide6.QtCore import QEventLoop, QTimer  # noqa: PLC0415 - after the environment
    from PySide6.QtWidgets import QApplication  # noqa: PLC0415

    from taskgui.app.wake import ask_on_wake  # noqa: PLC0415
    from taskgui.core.clock import FakeClock  # noqa: PLC0415
    from taskgui.core.recurrence import Every  # noqa: PLC0415
    from taskgui.core.task import Command, TaskSpec  # noqa: PLC0415
    from taskgui.core.wake import parse_wake_policy  # noqa: PLC0415
    from taskgui.runtime.service import SchedulerService  # noqa: PLC0415
    from taskgui.store.sqlite.repository import SqliteRepository  # noqa: PLC0415
    from taskgui.ui.window.main_window import LOCAL_OWNER, MainWindow  # noqa: PLC0415

    def settle(ms: int) -> None:
        loop = QEventLoop()
        QTimer.singleShot(ms, loop.quit)
        loop.exec()

    app = QApplication(sys.argv[:1])
    app.setApplicationName("taskgui")
    clock = FakeClock(datetime.now(UTC).replace(hour=23, minute=0, second=0, microsecond=0))
    repository = SqliteRepository(database)
    service = SchedulerService(repository, clock, workers=4, dispatch_ahead=0.0)
    service.set_wake_policy(parse_wake_policy("ask"), can_ask=True)
    service.start()
    start = clock.now()
    for index, name in enumerate(NAMES):
        service.add_task(
            TaskSpec(
                name=name,
                command=Command(line="true"),
                first_run_at=start
                + (timedelta(seconds=0.5) if index == 0 else index * timedelta(minutes=7)),
                recurrence=Every(timedelta(hours=1)),
                priority=index % 3,
            )
        )
    window = MainWindow(service, clock, location=str(database), schedule_owner=LOCAL_OWNER)
    prompt = ask_on_wake(service, window)
    assert prompt is not None
    window.resize(1180, 640)
    window.move(20, 20)
    window.show()
    settle(300)
    clock.jump_wall(timedelta(hours=8))  # asleep: the monotonic clock stood still
    for _ in range(50):
        settle(100)
        if prompt.box is not None and prompt.box.isVisible():
            break
    else:
        print("wake_screenshot: the question did not come", file=sys.stderr)
        return 1
    box = prompt.box
    box.move(window.x() + 360, window.y() + 170)
    settle(600)
    screen = app.primaryScreen()
    picture = screen.grabWindow(0)
    out.mkdir(parents=True, exist_ok=True)
    target = out / "wake-prompt.png"
    if not picture.copy(0, 0, 1220, 700).save(str(target), "PNG"):
        print(f"wake_screenshot: could not write {target}", file=sys.stderr)
        return 1
    print(target)
    box.close()
    window.close()
    service.shutdown(0.0)
    settle(300)
    repository.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
