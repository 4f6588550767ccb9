"""``benchmarks/bench_memory.py --smoke`` still runs: the real daemon starts on a file of
1,000 tasks as a new user would, and its resident memory is read beside APScheduler's
memory store (when APScheduler is installed). It checks that the script works, never
how much memory anything takes."""

from __future__ import annotations

import re

from tests.helpers.benchmarks import run_smoke


def test_bench_memory_smoke_run_measures_the_daemon_with_its_tasks_loaded() -> None:
    out = run_smoke("bench_memory.py", timeout=300)
    assert re.search(r"empty process: taskgui daemon [\d.,]+ MiB", out), out
    row = next((line for line in out.splitlines() if line.lstrip().startswith("1,000")), "")
    assert re.search(r"1,000\s+[\d.,]+ MiB\s+-?\d+ B", row), f"no 1,000-task row in:\n{out}"
    if "APScheduler not installed" not in out:
        assert re.search(r"MiB\s+-?\d+ B\s+[\d.]+x", row), f"no APScheduler figure in:\n{out}"
    assert "goal:" in out
