"""The cron benchmark still runs: ``benchmarks/bench_cron.py --smoke`` exits 0 with its
tables, every evaluator in both (croniter and cronsim are dev dependencies).

It checks that the script works and that taskgui's evaluator answers every cronie case
right; never how fast anything is.
"""

from __future__ import annotations

from tests.helpers.benchmarks import run_smoke


def test_bench_cron_smoke_run_prints_both_tables() -> None:
    out = run_smoke("bench_cron.py")
    lines = out.splitlines()
    for evaluator in ("taskgui", "cronsim", "croniter"):
        rows = [line for line in lines if line.startswith(evaluator)]
        assert len(rows) == 2, f"{evaluator} is not in both tables:\n{out}"
        assert all("n/a" not in row for row in rows), out
    [ours] = [line for line in lines if line.startswith("taskgui") and "/" in line]
    cases = ours.split()[1]
    assert cases.split("/")[0] == cases.split("/")[1], f"taskgui misses a cronie case:\n{out}"
    assert "ratio (same run)" in out
