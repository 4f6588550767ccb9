"""Running a benchmark script's ``--smoke`` mode in a subprocess, as the tests of
``benchmarks/`` do: they check that each script still works, never its speed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_smoke(script: str, *extra: str, timeout: float = 120) -> str:
    """``benchmarks/<script> --smoke *extra`` from the checkout, headless Qt; its stdout.

    Fails the test, with both outputs, unless the script exits 0.
    """
    env = {
        **os.environ,
        "QT_QPA_PLATFORM": "offscreen",
        "PYTHONPATH": str(ROOT),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    result = subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / script), "--smoke", *extra],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    assert result.returncode == 0, f"stdout:\n{result.stdout}\nstderr:\n{result.stderr}"
    return result.stdout
