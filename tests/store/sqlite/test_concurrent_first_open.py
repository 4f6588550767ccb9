"""Several processes opening a new file at once (the window, a CLI call, the daemon
started by autostart): each migrates it, and none applies a step another has applied.

Found from the outside: a daemon and an ``add`` on a new file failed with "duplicate
column name: rules", both having read the old version before either began."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from taskgui.store.sqlite.repository import SqliteRepository
from taskgui.store.sqlite.schema import SCHEMA_VERSION, schema_version

OPENERS = 6
TRIALS = 15


@pytest.mark.parametrize("trial", range(TRIALS))
def test_openers_racing_on_a_new_file_all_succeed(tmp_path: Path, trial: int) -> None:
    path = tmp_path / f"new-{trial}.sqlite3"
    start = threading.Barrier(OPENERS)
    errors: list[BaseException] = []

    def open_it() -> None:
        start.wait()
        try:
            SqliteRepository(path).close()
        except BaseException as error:  # reported below
            errors.append(error)

    threads = [threading.Thread(target=open_it) for _ in range(OPENERS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert errors == []
    repository = SqliteRepository(path)
    try:
        assert schema_version(repository._connection) == SCHEMA_VERSION
    finally:
        repository.close()
