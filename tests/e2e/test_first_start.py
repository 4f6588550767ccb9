"""End to end, as a new user: every way in on an account that never ran taskgui.

No ``--db``, no ``TASKGUI_DB``, and XDG folders that do not exist yet (a new account
often has no ``~/.local/share`` at all) or exist empty, exactly as ``make run`` meets
them. The first wave of tests always passed ``--db`` inside a folder that existed, and
so missed that the first start of every new user failed.

Each way in gets its own test: ``make run``'s ``python -m taskgui`` (the window), the
``taskgui`` script, ``taskgui daemon``, the CLI, and a second start that hands over
to the first. The window runs on Qt's offscreen platform; that it opened its main window
(not a message box) is read from the log line it writes once the window is up.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = Path(sys.executable).with_name("taskgui")  # the console script pip installed
WINDOW_UP = "the window shows"


class Account:
    """A new account: a home folder, XDG folders not yet there, an empty runtime folder."""

    def __init__(self, root: Path, *, xdg_exist: bool) -> None:
        self.home = root / "home"
        self.home.mkdir()
        self.data = self.home / ".local" / "share"
        self.state = self.home / ".local" / "state"
        self.config = self.home / ".config"
        self.runtime = root / "run"
        self.runtime.mkdir(mode=0o700)
        self.xdg_exist = xdg_exist
        if xdg_exist:
            for folder in (self.data, self.state, self.config):
                folder.mkdir(parents=True)
        self.env = {
            key: value
            for key, value in os.environ.items()
            if key != "TASKGUI_DB" and not key.startswith("XDG_")
        }
        self.env.update(
            HOME=str(self.home),
            XDG_DATA_HOME=str(self.data),
            XDG_STATE_HOME=str(self.state),
            XDG_CONFIG_HOME=str(self.config),
            XDG_CACHE_HOME=str(self.home / ".cache"),
            XDG_RUNTIME_DIR=str(self.runtime),
            QT_QPA_PLATFORM="offscreen",
        )
        self.processes: list[subprocess.Popen[str]] = []

    @property
    def database(self) -> Path:
        return self.data / "taskgui" / "taskgui.sqlite3"

    @property
    def log_file(self) -> Path:
        return self.state / "taskgui" / "log" / "taskgui.log"

    def run(self, *argv: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            list(argv), cwd=self.home, env=self.env, capture_output=True, text=True,
            timeout=timeout, check=False,
        )  # fmt: skip

    def start(self, *argv: str) -> subprocess.Popen[str]:
        process = subprocess.Popen(
            list(argv), cwd=self.home, env=self.env, text=True,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )  # fmt: skip
        self.processes.append(process)
        return process

    def log_text(self) -> str:
        try:
            return self.log_file.read_text(encoding="utf-8")
        except FileNotFoundError:
            return ""

    def stop_all(self) -> None:
        for process in self.processes:
            if process.poll() is None:
                process.kill()
            process.communicate(timeout=20)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    """Poll another process's visible state (a file, a log line) until a deadline."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def stop(process: subprocess.Popen[str]) -> tuple[int, str]:
    """SIGTERM, as the session does at logout; the exit status and stderr."""
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=30)
    return process.returncode, err


def assert_private_home(account: Account, *, logs: bool = True) -> None:
    # Every level taskgui created is 0700, the base folders too (XDG spec).
    folders = [account.database.parent]
    if logs:
        folders += [account.log_file.parent, account.log_file.parents[1]]
    if not account.xdg_exist:
        folders += [account.data, account.home / ".local"]
        folders += [account.state] if logs else []
    for folder in folders:
        assert mode(folder) == 0o700, folder
    assert mode(account.database) == 0o600


@pytest.fixture(params=[False, True], ids=["no-xdg-folders", "empty-xdg-folders"])
def account(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Account]:
    fresh = Account(tmp_path, xdg_exist=request.param)
    yield fresh
    fresh.stop_all()


def test_make_run_starts_the_window_with_python_dash_m() -> None:
    # The README's first command; the tests below start exactly what it runs.
    outer_make = ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")  # set when `make test` runs this
    env = {key: value for key, value in os.environ.items() if key not in outer_make}
    recipe = subprocess.run(
        ["make", "--no-print-directory", "-n", "-W", "pyproject.toml", "run"],
        cwd=ROOT, env=env, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    assert recipe.strip().splitlines()[-1] == ".venv/bin/python -m taskgui"


def test_the_window_opens_on_a_new_account(account: Account) -> None:
    window = account.start(sys.executable, "-m", "taskgui")

    wait_for(lambda: WINDOW_UP in account.log_text() or window.poll() is not None, "the window")
    assert window.poll() is None, window.communicate()
    log = account.log_text()
    assert f"{WINDOW_UP} {account.database}; this window runs its schedule" in log
    assert " ERROR " not in log
    assert_private_home(account)
    assert mode(account.config / "taskgui") == 0o700

    code, err = stop(window)
    assert code == 0, err
    assert "Traceback" not in err


def test_a_second_start_hands_over_to_the_first_window(account: Account) -> None:
    first = account.start(sys.executable, "-m", "taskgui")
    wait_for(lambda: WINDOW_UP in account.log_text(), "the first window")

    second = account.run(str(SCRIPT))  # the console script, as a launcher starts it

    assert second.returncode == 0, second.stderr
    assert "brought its window to the front" in second.stderr
    assert first.poll() is None
    assert stop(first)[0] == 0


def test_the_daemon_runs_a_task_on_a_new_account(account: Account) -> None:
    daemon = account.start(str(SCRIPT), "daemon", "--workers", "1")
    wait_for(lambda: "taskgui daemon (pid" in account.log_text(), "the daemon to start")
    out = account.home / "ran.txt"

    added = account.run(
        str(SCRIPT), "add", "--name", "first task", "--command", f"echo hello > {out}"
    )

    assert added.returncode == 0, added.stderr
    wait_for(out.exists, "the task's output")
    assert out.read_text() == "hello\n"
    assert_private_home(account)
    code, err = stop(daemon)
    assert code == 0, err
    assert "taskgui daemon stopped" in account.log_text()


def test_the_cli_works_on_a_new_account(account: Account) -> None:
    added = account.run(sys.executable, "-m", "taskgui", "add", "--name", "n", "--command", "true")
    listed = account.run(str(SCRIPT), "list")

    assert added.returncode == 0, added.stderr
    assert added.stdout.strip() == "1"
    assert listed.returncode == 0, listed.stderr
    assert "n" in listed.stdout.split()
    assert_private_home(account, logs=False)


def test_the_window_follows_a_daemon_started_first(account: Account) -> None:
    daemon = account.start(str(SCRIPT), "daemon")
    wait_for(lambda: "taskgui daemon (pid" in account.log_text(), "the daemon to start")

    window = account.start(sys.executable, "-m", "taskgui")

    wait_for(lambda: WINDOW_UP in account.log_text(), "the window")
    assert f"{WINDOW_UP} {account.database}; taskgui daemon" in account.log_text()
    assert stop(window)[0] == 0
    assert stop(daemon)[0] == 0


def test_a_start_that_fails_says_why_on_stderr_and_in_the_log(tmp_path: Path) -> None:
    account = Account(tmp_path, xdg_exist=True)
    account.data.rmdir()
    account.data.write_text("a file where the data folder should be\n")
    try:
        daemon = account.run(str(SCRIPT), "daemon", timeout=30)
        window = account.start(sys.executable, "-m", "taskgui")
        # The window waits in its error dialog (nobody clicks offscreen), but the
        # reason is already on stderr and in the log before the dialog opens.
        wait_for(lambda: account.log_text().count("could not start") >= 2, "the log line")
        window.kill()
        _, window_err = window.communicate(timeout=20)
    finally:
        account.stop_all()

    assert daemon.returncode == 1
    assert daemon.stderr.count("taskgui: error:") == 1
    assert "Traceback" not in daemon.stderr + window_err
    assert "taskgui could not start" in window_err
    assert str(account.data) in account.log_text()


def test_the_daemon_starts_where_the_keyring_client_is_not_installed(
    account: Account, tmp_path: Path
) -> None:
    """An environment made before jeepney was a dependency (an old .venv, a distribution
    package) once exited at start: "internal error: ModuleNotFoundError: jeepney". Only
    the keyring needs it; the schedule runs without it."""
    blocker = tmp_path / "no_jeepney"
    blocker.mkdir()
    (blocker / "jeepney.py").write_text("raise ImportError('jeepney is not installed')\n")
    account.env["PYTHONPATH"] = str(blocker)
    daemon = account.start(str(SCRIPT), "daemon", "--workers", "1")
    wait_for(lambda: "taskgui daemon (pid" in account.log_text(), "the daemon to start")
    out = account.home / "ran.txt"

    added = account.run(str(SCRIPT), "add", "--name", "t", "--command", f"echo hi > {out}")

    assert added.returncode == 0, added.stderr
    wait_for(out.exists, "the task's output")
    code, err = stop(daemon)
    assert code == 0 and "internal error" not in err, err


def test_without_a_display_the_window_says_so_in_one_line(account: Account) -> None:
    """A trial: with neither DISPLAY nor WAYLAND_DISPLAY, `taskgui` died of SIGABRT
    (exit 134) in Qt, whose lines blamed a library that was installed."""
    for name in ("DISPLAY", "WAYLAND_DISPLAY", "QT_QPA_PLATFORM"):
        account.env.pop(name, None)
    opened = account.run(sys.executable, "-m", "taskgui")
    assert opened.returncode == 1, opened.stderr
    assert opened.stderr.splitlines() == [
        "taskgui: error: no display to open the window on (DISPLAY and WAYLAND_DISPLAY "
        "are not set); run a command (taskgui --help), or the schedule without a window: "
        "taskgui daemon"
    ]
    assert not account.database.exists()  # nothing made for a window that cannot open
    listed = account.run(sys.executable, "-m", "taskgui", "list")
    assert listed.returncode == 0, listed.stderr  # the command line needs no display
