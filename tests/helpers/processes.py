"""Child processes that several test packages start."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


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
