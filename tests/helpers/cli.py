"""What the CLI tests get back from running ``taskgui.cli.main.main`` in-process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
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
