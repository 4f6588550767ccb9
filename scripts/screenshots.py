"""Screenshots of the real app on a demo schedule, for the README and for review.

Usage: python scripts/screenshots.py [--out docs/screenshots]   (or: make screenshots)

Runs the app under a private Xvfb X server (skipped, with a message, when Xvfb is not
installed: ``apt-get install xvfb``) on a database filled by ``scripts/seed_demo.py``,
with every XDG folder in a temporary directory so nothing of yours is read or written.
A driver in the app's process builds the real scheduler, window and shell, then saves
``QWidget.grab()`` images of:

    main-window.png        the task list, a running task selected
    main-window-dark.png   the same with a dark palette (icons and colours must hold up)
    timeline.png           the Timeline tab, six hours across
    timeline-week.png      the same, a week across (dense lanes fold into strips)
    notification.png       the in-window banner a failed task raises (no tray, no bus)
    task-dialog.png        editing a task
    task-dialog-conditions.png  its Conditions & spread section
    history.png            a failed task's runs and output
    tray-menu.png          the tray icon's menu
    settings.png           the settings dialog
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DRIVER_FLAG = "--driver"
SCREEN = "1600x1000x24"


def _start_xvfb(xvfb: str) -> tuple[subprocess.Popen[bytes], str]:
    """Xvfb on the first free display; it writes the number it took to our pipe."""
    read_end, write_end = os.pipe()
    server = subprocess.Popen(
        [xvfb, "-displayfd", str(write_end), "-screen", "0", SCREEN, "-nolisten", "tcp"],
        pass_fds=(write_end,),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    os.close(write_end)
    with os.fdopen(read_end) as pipe:
        number = pipe.readline().strip()
    if not number:
        server.kill()
        raise RuntimeError("Xvfb did not start")
    return server, f":{number}"


def run(out: Path) -> int:
    xvfb = shutil.which("Xvfb")
    if xvfb is None:
        print("screenshots: Xvfb is not installed (apt-get install xvfb); skipped")
        return 0
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="taskgui-shots-") as temp:
        home = Path(temp)
        database = home / "demo.sqlite3"
        seed = subprocess.run(
            [sys.executable, str(ROOT / "scripts" / "seed_demo.py"), str(database)],
            cwd=ROOT,
            check=False,
        )
        if seed.returncode != 0:
            return seed.returncode
        runtime = home / "run"
        runtime.mkdir(mode=0o700)
        environ = {
            key: value
            for key, value in os.environ.items()
            # No desktop session leaks in: no bus (the banner path), no theme.
            if key not in ("DBUS_SESSION_BUS_ADDRESS", "WAYLAND_DISPLAY", "QT_QPA_PLATFORMTHEME")
        }
        environ.update(
            {
                "QT_QPA_PLATFORM": "xcb",
                "XDG_CONFIG_HOME": str(home / "config"),
                "XDG_DATA_HOME": str(home / "data"),
                "XDG_STATE_HOME": str(home / "state"),
                "XDG_CACHE_HOME": str(home / "cache"),
                "XDG_RUNTIME_DIR": str(runtime),
                "TASKGUI_DB": str(database),
                "PYTHONPATH": str(ROOT),
            }
        )
        server, display = _start_xvfb(xvfb)
        try:
            environ["DISPLAY"] = display
            driver = subprocess.run(
                [sys.executable, str(Path(__file__).resolve()), DRIVER_FLAG, "--out", str(out)],
                env=environ,
                cwd=ROOT,
                check=False,
                timeout=int(os.environ.get("SCREENSHOTS_TIMEOUT", "120")),
            )
        finally:
            server.terminate()
            server.wait(timeout=10)
    if driver.returncode == 0:
        for path in sorted(out.glob("*.png")):
            shown = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path
            print(f"screenshots: wrote {shown}")
    return driver.returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "screenshots")
    parser.add_argument(DRIVER_FLAG, action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    out = args.out if args.out.is_absolute() else Path.cwd() / args.out
    if args.driver:
        import faulthandler  # noqa: PLC0415

        faulthandler.dump_traceback_later(100, exit=True)  # a hung driver says where
        from screenshot_driver import drive  # noqa: PLC0415 - Qt only in the child

        return drive(out)
    return run(out)


if __name__ == "__main__":
    sys.exit(main())
