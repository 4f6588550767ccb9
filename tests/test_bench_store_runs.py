"""The store benchmark still runs: a tiny ``--smoke`` run in a subprocess.

It checks that the script works and prints its table, never how fast anything is.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers import benchmarks


def run_smoke(*extra: str) -> str:
    return benchmarks.run_smoke("bench_store.py", *extra)


def test_the_smoke_run_prints_the_table(tmp_path: Path) -> None:
    out = run_smoke("--dir", str(tmp_path))

    assert out.startswith("taskgui store benchmark (smoke)")
    header = next(line for line in out.splitlines() if line.startswith("operation"))
    for column in ("taskgui", "raw SQL", "APScheduler", "goal", "verdict"):
        assert column in header
    for row in ("add, 1 per commit", "cancel, 1 per commit", "update, 1 per commit"):
        assert row in out
    assert "bulk import" in out and "cold start" in out
    assert "goal(s) missed" in out or "all goals met" in out
    assert list(tmp_path.iterdir()) == []  # its databases are cleaned up


def test_the_apscheduler_columns_can_be_left_out(tmp_path: Path) -> None:
    out = run_smoke("--without-apscheduler", "--dir", str(tmp_path))

    assert "APScheduler columns skipped" in out
    assert "add, 1 per commit" in out
