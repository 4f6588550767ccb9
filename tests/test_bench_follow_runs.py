"""The follower benchmark still runs: a tiny ``--smoke`` run in a subprocess.

It checks that the script works and prints its table, never how fast anything is.
"""

from __future__ import annotations

from pathlib import Path

from tests.helpers import benchmarks


def test_the_smoke_run_prints_the_table(tmp_path: Path) -> None:
    out = benchmarks.run_smoke("bench_follow.py", "--dir", str(tmp_path))

    assert out.startswith("taskgui follower benchmark (smoke)")
    header = next(line for line in out.splitlines() if line.startswith("change"))
    for column in ("follower", "full reload", "ratio"):
        assert column in header
    for row in ("output saved", "one task paused", "a run ends", "first read"):
        assert f"{row}, at 200" in out
    assert list(tmp_path.iterdir()) == []  # its database is cleaned up
