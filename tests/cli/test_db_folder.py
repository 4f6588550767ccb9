"""A ``--db`` whose folder does not exist is refused, not made (an outsider's trial:
``taskgui --db /typo/dir/x.sqlite3 list`` made the folders, and then a schedule there).

Exit status 2, bad input, with one line naming the folder; nothing is created. The
default database's folders are still made on a new account (``tests/e2e``).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from taskgui.cli import main as cli
from taskgui.core.clock import FakeClock
from tests.helpers.cli import program
from tests.helpers.factories import T0

COMMANDS = [
    ["list"],
    ["show", "1"],
    ["history", "1"],
    ["add", "--name", "n", "--command", "true"],
    ["cancel", "1"],
    ["export", "-"],
]


def _refused(folder: Path, code: int, err: str) -> None:
    assert code == 2, err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("taskgui: error: "), err
    assert f"the folder {folder} does not exist" in err
    assert "--db" in err or "TASKGUI_DB" in err


@pytest.mark.parametrize("argv", COMMANDS, ids=lambda argv: argv[0])
def test_a_db_in_a_folder_that_does_not_exist_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    folder = tmp_path / "typo" / "dir"
    code = cli.main(["--db", str(folder / "x.sqlite3"), *argv], clock=FakeClock(T0))
    captured = capsys.readouterr()

    _refused(folder, code, captured.err)
    assert captured.out == ""
    assert list(tmp_path.iterdir()) == []  # neither "typo" nor "dir" was made


def test_the_daemon_refuses_it_too_before_it_makes_anything(tmp_path: Path) -> None:
    folder = tmp_path / "typo"
    done = program(folder / "x.sqlite3", "daemon")

    _refused(folder, done.returncode, done.stderr)
    assert list(tmp_path.iterdir()) == []


def test_a_db_in_a_folder_that_exists_is_made_there(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    database = tmp_path / "x.sqlite3"
    code = cli.main(["--db", str(database), "add", "--name", "n", "--command", "true"])
    assert code == 0, capsys.readouterr().err
    assert database.is_file()


def test_a_taskgui_db_in_a_folder_that_does_not_exist_is_refused_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """$TASKGUI_DB names a database by hand as --db does (a review of the first fix)."""
    folder = tmp_path / "typo"
    monkeypatch.setenv("TASKGUI_DB", str(folder / "x.sqlite3"))
    code = cli.main(["list"], clock=FakeClock(T0))
    err = capsys.readouterr().err

    _refused(folder, code, err)
    assert "correct the path given with $TASKGUI_DB" in err
    assert list(tmp_path.iterdir()) == []
