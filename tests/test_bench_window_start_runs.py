"""The start benchmark still runs: ``benchmarks/bench_window_start.py --smoke`` starts the
daemon and the window in fresh processes and prints both times and their ratio; it
checks that the script works, never how fast anything is."""

from __future__ import annotations

from tests.helpers.benchmarks import run_smoke


def test_the_smoke_run_times_both_starts() -> None:
    out = run_smoke("bench_window_start.py", timeout=300)
    assert out.startswith("taskgui start benchmark")
    for row in ("daemon start (baseline)", "window start, first rows painted", "ratio (same run)"):
        assert row in out, f"{row!r} missing from:\n{out}"
    assert "goal:" not in out  # the smoke run checks no goals
