"""The log file is private (0600) whatever the umask, and so is each file it rotates to."""

from __future__ import annotations

import logging
import os
import stat
from pathlib import Path

from taskgui.app.logs import PrivateRotatingFileHandler


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_the_log_and_its_rotations_are_0600_under_umask_000(tmp_path: Path) -> None:
    path = tmp_path / "taskgui.log"
    old = os.umask(0)
    try:
        handler = PrivateRotatingFileHandler(path, maxBytes=200, backupCount=2, encoding="utf-8")
        record = logging.LogRecord("taskgui", logging.INFO, __file__, 1, "x" * 150, None, None)
        for _ in range(4):  # past maxBytes twice: two rotations
            handler.emit(record)
        handler.close()
    finally:
        os.umask(old)
    files = sorted(tmp_path.iterdir())
    assert [f.name for f in files] == ["taskgui.log", "taskgui.log.1", "taskgui.log.2"]
    assert {f.name: _mode(f) for f in files} == {f.name: 0o600 for f in files}


def test_a_log_left_world_readable_is_tightened(tmp_path: Path) -> None:
    path = tmp_path / "taskgui.log"
    path.write_text("old lines\n")
    path.chmod(0o666)
    handler = PrivateRotatingFileHandler(path, encoding="utf-8")
    handler.close()
    assert _mode(path) == 0o600
    assert path.read_text() == "old lines\n"
