"""The table benchmark still runs: ``benchmarks/bench_model.py --smoke`` in a subprocess.

It checks that the script works against the current ui layer and prints its three
tables, never how fast anything is.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SCRIPT = ROOT / "benchmarks" / "bench_model.py"


def test_the_smoke_run_prints_its_tables() -> None:
    env = {**os.environ, "QT_QPA_PLATFORM": "offscreen", "PYTHONDONTWRITEBYTECODE": "1"}
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--smoke"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    out = result.stdout
    assert out.startswith("taskgui table benchmark (smoke)")
    for row in (
        "model alone",
        "sorted by next run",
        "tick() + repaint",
        "adds, coalesced",
        "adds, synchronous (baseline)",
        "changes, coalesced",
        "ratio, adds",
    ):
        assert row in out, f"{row!r} missing from:\n{out}"
    assert "nan" not in out
    assert "goal:" not in out  # the smoke run checks no goals
