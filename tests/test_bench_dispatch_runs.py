"""The dispatch benchmark still runs: a tiny ``--smoke`` run in a subprocess.

It checks that the script works and prints its table, never how fast anything is.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers import benchmarks


def run_smoke(tmp_path: Path, *extra: str) -> str:
    return benchmarks.run_smoke("bench_dispatch.py", "--dir", str(tmp_path), *extra, timeout=60)


def table_header(out: str) -> str:
    header = next((line for line in out.splitlines() if line.startswith("scenario")), "")
    assert header, f"no table header in:\n{out}"
    return header


def test_the_smoke_run_prints_the_table(tmp_path: Path) -> None:
    out = run_smoke(tmp_path)

    assert out.startswith("taskgui dispatch benchmark (smoke)")
    header = table_header(out)
    for column in ("taskgui", "APS memory", "APS SQLite", "goal", "verdict"):
        assert column in header
    for row in (
        "20 over 0.5 s: worker start p50",
        "20 over 0.5 s: dispatch p99",
        "single 0.3 s ahead (x1): worker start p99",
        "sustained 5 every 1-2 s for 3 s: worker start max",
        "throughput 20, spawn true",
        "pool hand-off, idle, p99",
    ):
        line = next((line for line in out.splitlines() if line.startswith(row)), "")
        assert line, f"row {row!r} missing from:\n{out}"
    assert "goal(s) missed" in out or "all goals met" in out
    assert list(tmp_path.iterdir()) == []  # its databases are cleaned up


def test_the_apscheduler_columns_can_be_left_out(tmp_path: Path) -> None:
    out = run_smoke(tmp_path, "--without-apscheduler")

    assert "APScheduler columns skipped: --without-apscheduler." in out
    assert "taskgui" in table_header(out)
    label = "20 over 0.5 s: worker start p50"
    row = next(line for line in out.splitlines() if line.startswith(label))
    unit, taskgui, aps_memory, aps_sqlite = row[len(label) :].split()[:4]
    assert unit == "ms" and taskgui != "-"
    assert aps_memory == aps_sqlite == "-"


def test_the_throughput_alone_has_the_bare_spawn_loop_beside_it(tmp_path: Path) -> None:
    out = run_smoke(
        tmp_path,
        "--throughput-only",
        "--rounds",
        "2",
        "--tasks",
        "10",
        "--pools",
        "2",
        "--without-apscheduler",
    )

    header = table_header(out)
    assert "bare loop" in header and "tg/bare" in header
    label = "throughput 10, pool 2, median of 2"
    row = next((line for line in out.splitlines() if line.startswith(label)), "")
    assert row, f"row {label!r} missing from:\n{out}"
    unit, taskgui, unqueued, aps_memory, aps_sqlite, bare = row[len(label) :].split()[:6]
    assert unit == "/s" and "-" not in (taskgui, unqueued, bare)  # taskgui with no queue too
    assert aps_memory == aps_sqlite == "-"
    assert out.count("round ") == 2
    assert "median of each round's ratio" in out and "÷ taskgui, no queue" in out
    assert list(tmp_path.iterdir()) == []
