"""``taskgui --db postgresql://...`` as a new user starts it (empty XDG folders, no
SQLite file anywhere): the real program opens its window on the shared schedule that
a real node runs, follows it, says so in its log with the password masked, makes no
file of a schedule of its own, and quits cleanly on SIGTERM.
"""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

from tests.helpers.shared_nodes import Nodes, _environ, wait_for
from tests.helpers.store import ROOT


def test_the_program_opens_its_window_on_a_shared_schedule(nodes: Nodes, tmp_path: Path) -> None:
    nodes.join("a")
    nodes.add("--name", "hello", "--in", "1h", "--command", "true")
    home = tmp_path / "home-window"
    dsn = nodes.dsn.replace("://postgres@", "://postgres:s3cret@")  # trust auth ignores it
    with (tmp_path / "window.stderr").open("w") as stderr:
        window = subprocess.Popen(
            [sys.executable, "-m", "taskgui", "--db", dsn],
            cwd=ROOT,
            env=_environ(home),
            stdout=subprocess.DEVNULL,
            stderr=stderr,
        )
        try:
            log = home / "state" / "taskgui" / "log" / "taskgui.log"

            def following() -> bool:
                text = log.read_text() if log.exists() else ""
                return "runs its schedule" in text

            wait_for(following, 30)
            assert window.poll() is None
        finally:
            window.send_signal(signal.SIGTERM)
            code = window.wait(timeout=30)
    text = log.read_text()
    assert code == 0, (tmp_path / "window.stderr").read_text()
    assert "follows the shared schedule postgresql://postgres:***@" in text
    assert "node a runs its schedule" in text
    assert "s3cret" not in text + (tmp_path / "window.stderr").read_text()
    assert not list(home.rglob("*.sqlite3"))  # no schedule of its own was made
