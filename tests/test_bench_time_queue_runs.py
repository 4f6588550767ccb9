"""``benchmarks/bench_time_queue.py --smoke`` still runs: both time queues and the heapq
baseline at every workload, with the same-run ratios. It checks that the script works,
never how fast anything is."""

from __future__ import annotations

from tests.helpers.benchmarks import run_smoke

WORKLOADS = ("build", "push", "discard", "hold", "cancel-heavy", "rate")


def test_bench_time_queue_smoke_run_prints_every_workload_for_every_queue() -> None:
    out = run_smoke("bench_time_queue.py")
    lines = out.splitlines()
    header = next((line for line in lines if line.startswith("µs per step")), "")
    for name in ("heap", "wheel", "heapq"):
        assert f"2k {name}" in header, f"no {name} column in:\n{out}"
    ratios = next((line for line in lines if line.startswith("ratio (same run)")), "")
    assert "wheel/heap" in ratios and "heap/heapq" in ratios, out
    for workload in WORKLOADS:
        rows = [line for line in lines if line.split()[:1] == [workload]]
        assert len(rows) == 2, f"{workload}: a figure row and a ratio row expected in:\n{out}"
        assert "nan" not in " ".join(rows) and "inf" not in " ".join(rows), rows
    assert "bytes per key (RSS)" in out
    assert out.count("sustained schedule rate at") == 2
