"""The table benchmark still runs: ``benchmarks/bench_model.py --smoke`` in a subprocess.

It checks that the script works against the current ui layer and prints its three
tables, never how fast anything is.
"""

from __future__ import annotations

from tests.helpers.benchmarks import run_smoke


def test_the_smoke_run_prints_its_tables() -> None:
    out = run_smoke("bench_model.py", timeout=300)
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
