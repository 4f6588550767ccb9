"""Without a reachable server the PostgreSQL tests skip with one clear line, and with
TASKGUI_REQUIRE_POSTGRES=1 (what .ci/run sets) they fail instead.

Runs pytest in a subprocess on two of the store's tests, pointed at a port where no
server listens."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.helpers.postgres import ADMIN_DSN_VAR, REQUIRE_VAR
from tests.helpers.store import ROOT

_NOWHERE = "postgresql://postgres@127.0.0.1:1/postgres"
_TESTS = [
    "tests/store/postgres/test_postgres_store.py::test_reopening_keeps_the_tasks_and_migrates_nothing",
    "tests/store/postgres/test_postgres_store.py::test_output_with_nul_bytes_is_stored_with_a_replacement",
]


def _pytest(require: bool) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key != REQUIRE_VAR}
    env[ADMIN_DSN_VAR] = _NOWHERE
    if require:
        env[REQUIRE_VAR] = "1"
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *_TESTS],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.slow
def test_no_server_skips_every_test_with_one_line() -> None:
    result = _pytest(require=False)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = [line for line in result.stdout.splitlines() if line.startswith("SKIPPED")]
    assert len(lines) == 1, result.stdout
    assert "[2]" in lines[0] and "PostgreSQL tests need a server" in lines[0]
    assert "127.0.0.1:1" in lines[0]


@pytest.mark.slow
def test_a_required_server_that_is_missing_fails() -> None:
    result = _pytest(require=True)
    assert result.returncode == 1, result.stdout + result.stderr
    assert f"{REQUIRE_VAR}=1" in result.stdout
