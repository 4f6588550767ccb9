"""Entry point for ``python -m taskgui`` and the ``taskgui`` console script.

With a command (``taskgui add ...``, ``taskgui list``) it runs the command line; with
none it opens the window, and ``taskgui daemon`` runs the schedule headless. Qt and the
composition roots are imported only on those two paths, so the command line starts
fast and works where no display exists.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path

from taskgui.cli.main import main as run_cli
from taskgui.core.wake import WakePolicy


def _import_qt() -> None:
    """Qt first, before the composition root imports the rest (see app.qt_import)."""
    from taskgui.app.qt_import import import_qt  # noqa: PLC0415 - only where Qt is used

    import_qt()


NO_DISPLAY = (
    "taskgui: error: no display to open the window on (DISPLAY and WAYLAND_DISPLAY "
    "are not set); run a command (taskgui --help), or the schedule without a window: "
    "taskgui daemon"
)


def _no_display() -> bool:
    """Linux with neither X nor Wayland named and no Qt platform chosen: Qt would abort
    the process (SIGABRT, exit 134) with lines that blame a library (a trial)."""
    if not sys.platform.startswith("linux") or os.environ.get("QT_QPA_PLATFORM"):
        return False
    named = ("DISPLAY", "WAYLAND_DISPLAY", "WAYLAND_SOCKET")  # the last: a socket given
    return not any(os.environ.get(name) for name in named)


def run_gui(argv: list[str]) -> int:
    """Open the window for the global flags in ``argv`` (``--db``, ``--reset-corrupt``)."""
    if _no_display():
        print(NO_DISPLAY, file=sys.stderr)
        return 1
    _import_qt()
    from taskgui.app.window import main as open_window  # noqa: PLC0415 - Qt widgets

    return open_window(argv)


def run_daemon(
    database: Path | str,
    workers: int,
    reset_corrupt: bool,
    on_wake: WakePolicy | None = None,
    *,
    node: str | None = None,
    tags: list[str] | None = None,
) -> int:
    """``taskgui daemon``: the schedule of ``database`` without a window; a DSN (str):
    this machine as a node of that shared schedule."""
    _import_qt()
    if isinstance(database, str):
        from taskgui.app.cluster_daemon import run_cluster_daemon  # noqa: PLC0415

        return run_cluster_daemon(database, workers, node, tags or [])
    from taskgui.app.daemon import run_daemon as run  # noqa: PLC0415 - QtCore

    return run(database, workers, reset_corrupt, on_wake=on_wake)


def main(argv: Sequence[str] | None = None) -> int:
    """Run taskgui and return the process exit status."""
    return run_cli(argv, gui=run_gui, daemon=run_daemon)


if __name__ == "__main__":
    raise SystemExit(main())
