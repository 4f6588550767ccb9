"""The daemon's wake-up policy, as a new user starts it: the window's Settings file, or
the ``--on-wake`` flag over it; it says in its log what a wake-up will do."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.test_daemon_log import new_user
from tests.helpers.processes import daemon_until


def _lines(log_file: Path) -> list[str]:
    if not log_file.exists():
        return []
    return [x for x in log_file.read_text(encoding="utf-8").splitlines() if "after a sleep" in x]


def _started_line(env: dict[str, str], tmp_path: Path, *flags: str) -> str:
    """Start the daemon, wait for its start line, stop it; return that line."""
    log_file = tmp_path / "state" / "taskgui" / "log" / "taskgui.log"
    before = len(_lines(log_file))
    daemon_until(env, lambda: len(_lines(log_file)) > before, *flags)
    [line] = _lines(log_file)[before:]
    return line


@pytest.mark.slow
def test_the_settings_policy_then_the_flag_and_ask_spreads(tmp_path: Path) -> None:
    env = new_user(tmp_path)
    assert "after a sleep: spread the catch-ups over 10m" in _started_line(env, tmp_path)
    config = tmp_path / "config" / "taskgui"
    config.mkdir()
    (config / "taskgui.conf").write_text("[wake]\npolicy=now\n", encoding="utf-8")
    assert "after a sleep: run the catch-ups at once" in _started_line(env, tmp_path)
    line = _started_line(env, tmp_path, "--on-wake", "ask")
    assert "after a sleep: spread the catch-ups over 10m (nobody to ask)" in line
