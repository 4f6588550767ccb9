"""The soak script still runs: ``benchmarks/soak_daemon.py --smoke`` starts the real
daemon as a new user would, samples it and stops it. It checks the script works and
reports its figures, never how much memory anything takes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import benchmarks


@pytest.mark.slow
def test_the_smoke_soak_samples_the_daemon_and_stops_it(tmp_path: Path) -> None:
    out = benchmarks.run_smoke("soak_daemon.py", "--dir", str(tmp_path), timeout=120)

    lines = out.splitlines()
    assert lines[0].startswith("taskgui soak: daemon pid")
    header = "elapsed_s,rss_kib,anon_kib,fds,threads,runs,late_p50_ms,late_p99_ms,late_max_ms"
    rows = [line.split(",") for line in lines[lines.index(header) + 1 :] if line.count(",") == 8]
    assert len(rows) >= 3
    runs = [int(row[5]) for row in rows]
    assert runs == sorted(runs) and runs[-1] > 0  # the tasks ran, and were counted
    assert all(int(row[1]) > 0 and int(row[3]) > 0 and int(row[4]) > 0 for row in rows)
    for start in ("at start", "RSS slope after warm-up", "RssAnon slope", "start lateness"):
        assert any(line.startswith(start) for line in lines), f"no {start!r} line in:\n{out}"
    assert "daemon exit status 0" in out
    assert list(tmp_path.iterdir()) == []  # its folder is cleaned up
