"""The core benchmark still runs: ``benchmarks/bench_core.py --smoke`` exits 0 with its table.

Only a smoke run (sizes 100 and 1000, 50 operations): it checks that the script works
against the current core, not how fast the core is.
"""

from __future__ import annotations

from tests.helpers.benchmarks import ROOT, run_smoke


def test_bench_core_smoke_run_prints_its_table() -> None:
    out = run_smoke("bench_core.py")
    header = next((line for line in out.splitlines() if line.startswith("operation (us/op)")), "")
    assert header, f"no table header in:\n{out}"
    assert "100" in header
    assert "1k" in header
    assert "growth 100->1k" in header
    for row in ("IndexedHeap.pop (head)", "heapq+lazy cancel(id)", "Engine.cancel(id)"):
        line = next((line for line in out.splitlines() if line.startswith(row)), "")
        assert line, f"row {row!r} missing from:\n{out}"
        assert "n/a" not in line.split(row, 1)[1], f"row {row!r} has a missing value: {line}"
    assert "ratio (same run)" in out
    assert "goals at" not in out  # the smoke run checks no goals


def test_bench_core_smoke_run_over_the_wheel() -> None:
    out = run_smoke("bench_core.py", "--time-queue", "wheel")
    assert "engine time queue wheel" in out.splitlines()[0]
    line = next((line for line in out.splitlines() if line.startswith("Engine.cancel(id)")), "")
    assert line and "n/a" not in line, out


def test_compare_core_smoke_run_pairs_two_checkouts() -> None:
    out = run_smoke("compare_core.py", "--base", str(ROOT))
    assert "interleaved" in out.splitlines()[0]
    for label in ("engine add incl. the spec", "engine cancel", "engine due head (ready)"):
        line = next((line for line in out.splitlines() if line.startswith(label)), "")
        assert line.count("x)") == 2, f"row {label!r} lacks a ratio per size:\n{out}"
