"""taskgui's folders are created private at every level, and tightened only when ours."""

from __future__ import annotations

import logging
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from taskgui.store.errors import DatabasePathError
from taskgui.store.private_folders import (
    make_database_folder,
    make_log_folder,
    make_private_folder,
)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def open_umask() -> Iterator[None]:
    previous = os.umask(0)
    yield
    os.umask(previous)


def test_every_missing_level_is_created_0700_even_under_umask_000(
    tmp_path: Path, open_umask: None
) -> None:
    database = tmp_path / "home" / ".local" / "share" / "taskgui" / "taskgui.sqlite3"

    make_database_folder(database)

    for level in database.parents[:4]:
        assert mode(level) == 0o700, level


def test_a_log_folder_and_its_state_folder_are_private(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))

    folder = make_log_folder()

    assert folder == tmp_path / "state" / "taskgui" / "log"
    assert [mode(level) for level in (folder, folder.parent, folder.parents[1])] == [0o700] * 3


def test_a_wide_folder_with_only_our_files_is_tightened_and_logged(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = tmp_path / "taskgui"
    folder.mkdir()
    for name in ("taskgui.sqlite3", "taskgui.sqlite3-wal", "taskgui.sqlite3.lock"):
        (folder / name).touch()
    folder.chmod(0o755)

    with caplog.at_level(logging.INFO, logger="taskgui"):
        make_database_folder(folder / "taskgui.sqlite3")

    assert mode(folder) == 0o700
    assert "was 755" in caplog.text


@pytest.mark.parametrize("extra", ["notes.txt", "other.sqlite3"])
def test_a_shared_folder_keeps_its_mode(tmp_path: Path, extra: str) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / extra).touch()
    folder.chmod(0o755)

    make_database_folder(folder / "schedule.sqlite3")

    assert mode(folder) == 0o755


def test_a_sticky_shared_folder_is_never_tightened(tmp_path: Path) -> None:
    folder = tmp_path / "shared"
    folder.mkdir()
    folder.chmod(0o1777)

    make_private_folder(folder, lambda name: True)

    assert mode(folder) == 0o1777


def test_a_file_in_the_way_is_refused_with_the_path(tmp_path: Path) -> None:
    blocker = tmp_path / "share"
    blocker.write_text("not a folder")

    with pytest.raises(DatabasePathError, match=str(blocker)):
        make_database_folder(blocker / "taskgui" / "taskgui.sqlite3")
    with pytest.raises(DatabasePathError, match="is not a folder"):
        make_private_folder(blocker, lambda name: True)
