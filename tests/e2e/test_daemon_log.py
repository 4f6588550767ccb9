"""The headless daemon says in its log when a task fails and when it gives up.

Run as a new user runs it: empty XDG folders, no ``--db``, ``taskgui add`` and then
``taskgui daemon`` as separate processes; the log file is read from the state folder
the daemon chose, and its stderr from the pipe.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers.processes import ROOT, daemon_until

NAME = "nightly sync\x1b[31m"  # an escape in the name must not reach the log raw


def new_user(tmp_path: Path) -> dict[str, str]:
    """The environment of an account that never ran taskgui."""
    folders = {
        "HOME": tmp_path / "home",
        "XDG_DATA_HOME": tmp_path / "data",
        "XDG_STATE_HOME": tmp_path / "state",
        "XDG_CONFIG_HOME": tmp_path / "config",
        "XDG_RUNTIME_DIR": tmp_path / "runtime",
    }
    for folder in folders.values():
        folder.mkdir(mode=0o700)
    env = {key: value for key, value in os.environ.items() if key != "TASKGUI_DB"}
    return {
        **env,
        **{key: str(path) for key, path in folders.items()},
        "QT_QPA_PLATFORM": "offscreen",
    }


def taskgui(env: dict[str, str], *args: str) -> str:
    result = subprocess.run(
        [sys.executable, "-m", "taskgui", *args],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.slow
def test_the_daemon_logs_each_failed_attempt_and_the_give_up(tmp_path: Path) -> None:
    env = new_user(tmp_path)
    task_id = int(
        taskgui(
            env,
            "add",
            "--name",
            NAME,
            "--command",
            "echo trying; exit 3",
            "--max-attempts",
            "2",
            "--retry-delay",
            "1s",
            "--backoff",
            "fixed",
        )
    )
    log_file = tmp_path / "state" / "taskgui" / "log" / "taskgui.log"

    def given_up() -> bool:
        return log_file.exists() and "gave up" in log_file.read_text(encoding="utf-8")

    stderr = daemon_until(env, given_up, "--workers", "1")

    logged = log_file.read_text(encoding="utf-8")
    name = repr(NAME)  # quoted, the escape spelled out
    for attempt in (1, 2):
        line = f"INFO taskgui.daemon: task {task_id} {name}: attempt {attempt} of 2 failed"
        assert f"{line} (exit 3): exit status 3\n" in logged, logged
    gave_up = (
        f"WARNING taskgui.daemon: task {task_id} {name} gave up after 2 attempts; "
        "the last failed (exit 3): exit status 3\n"
    )
    assert gave_up in logged, logged
    assert "\x1b" not in logged
    for text in ("attempt 1 of 2 failed (exit 3)", "attempt 2 of 2 failed (exit 3)", gave_up):
        assert text in stderr, stderr
