"""What the CLI tests get back from running ``taskgui.cli.main.main`` in-process."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)


Run = Callable[..., Result]


def program(db: Path, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    """The real program in a subprocess on ``db``, in UTC, the way a script runs it."""
    return subprocess.run(
        [sys.executable, "-m", "taskgui", "--db", str(db), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT), "TZ": "UTC"},
        timeout=30,
        check=False,
    )


def on_a_terminal(
    db: Path | str, answer: str, *args: str, env: Mapping[str, str] | None = None
) -> tuple[int, str]:
    """The real program on ``db`` (a file or a DSN) with a terminal on stdin (a pty),
    answering its question with ``answer``; its exit status and everything it wrote.
    ``env``: its environment (default this one's, without TASKGUI_DB)."""
    main, child = pty.openpty()
    environ = dict(env) if env is not None else dict(os.environ)
    environ["PYTHONPATH"] = str(ROOT)
    environ.pop("TASKGUI_DB", None)
    process = subprocess.Popen(
        [sys.executable, "-m", "taskgui", "--db", str(db), *args],
        stdin=child,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=environ,
        cwd=ROOT,
    )
    os.close(child)
    try:
        os.write(main, answer.encode() + b"\n")
        out, err = process.communicate(timeout=30)
    finally:
        os.close(main)
    return process.returncode, out.decode() + err.decode()
