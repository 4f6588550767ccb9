"""The shape benchmark still runs: a tiny ``--smoke`` run in a subprocess.

It checks that the script works and prints its table, never how fast anything is.
"""

from __future__ import annotations

from tests.helpers.benchmarks import run_smoke


def test_the_smoke_run_prints_every_path_and_the_bulk_ratio() -> None:
    out = run_smoke("bench_shape.py")

    assert out.startswith("taskgui shape benchmark (smoke)")
    header = next(line for line in out.splitlines() if line.startswith("path"))
    for column in ("taskgui", "msgspec", "msgspec/taskgui"):
        assert column in header
    for row in ("store encode", "store decode", "export encode", "export decode"):
        line = next((line for line in out.splitlines() if line.startswith(row)), "")
        assert line, f"row {row!r} missing from:\n{out}"
        assert line.split()[-3] != "n/a", line  # taskgui's own figure is always there
    for row in ("request encode", "request decode", "runs encode", "runs decode"):
        assert row in out
    assert "x raw in the same round (goal: at most 2x)" in out
