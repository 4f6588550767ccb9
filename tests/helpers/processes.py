"""Child processes that several test packages start."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def fresh_python(
    code: str, *, env: Mapping[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """``python -c code`` in a new interpreter: what a start imports, seen from outside
    (the test's own interpreter has imported everything long ago). Run from this
    checkout, which ``-c`` puts first on the path, with ``env`` over the test's own
    environment and no ``TASKGUI_DB``."""
    environ = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    environ.pop("TASKGUI_DB", None)
    return subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=environ,
        cwd=ROOT,
        check=False,
        timeout=timeout,
    )


@contextmanager
def request_server(db: Path) -> Iterator[subprocess.Popen[str]]:
    """A separate process that holds ``db``'s scheduler lock and answers requests.

    It stands in for ``taskgui daemon`` where a test needs "someone else runs the
    schedule" without real commands running (``tests/cli/request_server.py``).
    """
    environ = {**os.environ, "PYTHONPATH": str(ROOT)}
    with subprocess.Popen(
        [sys.executable, "-m", "tests.cli.request_server", str(db)],
        stdout=subprocess.PIPE,
        text=True,
        env=environ,
        cwd=ROOT,
    ) as child:
        try:
            assert child.stdout is not None
            assert child.stdout.readline() == "ready\n"
            yield child
        finally:
            child.terminate()
            child.wait(timeout=10)


def daemon_until(
    env: dict[str, str], done: Callable[[], bool], *flags: str, timeout: float = 30
) -> str:
    """Run ``taskgui daemon`` as the account of ``env`` until ``done()`` says so (or
    ``timeout`` seconds pass), then stop it with SIGTERM, as a service manager would.

    ``done`` is polled every 0.1 s because what the e2e tests wait for is a line in a
    log file another process writes. The daemon must exit 0; its stderr is returned.
    """
    daemon = subprocess.Popen(
        [sys.executable, "-m", "taskgui", "daemon", *flags],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline and not done():
            time.sleep(0.1)
        daemon.send_signal(signal.SIGTERM)
        _, stderr = daemon.communicate(timeout=30)
    finally:
        if daemon.poll() is None:
            daemon.kill()
            daemon.wait(timeout=10)
    assert daemon.returncode == 0, stderr
    return stderr
