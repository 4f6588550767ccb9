"""The timeline benchmark still runs: ``benchmarks/bench_timeline.py --smoke``.

It checks that the script works and prints its table, never how fast anything is.
"""

from __future__ import annotations

from tests.helpers.benchmarks import run_smoke


def test_the_smoke_run_prints_the_table_and_both_ratios() -> None:
    out = run_smoke("bench_timeline.py", timeout=300)
    assert out.startswith("taskgui timeline benchmark (smoke)")
    for row in ("lanes drawn", "ratio, hours", "ratio, week"):
        assert row in out, f"{row!r} missing from:\n{out}"
    assert "nan" not in out
    # The histories read are those of the lanes in view, for both sizes alike.
    rows = [line.split() for line in out.splitlines() if line.startswith(("hours", "week"))]
    assert {row[2] for row in rows} == {row[3] for row in rows}
