"""The real ``taskgui`` program, as a new user meets it, fed hostile input.

Each case runs ``python -m taskgui`` in a subprocess with empty XDG folders and no
``--db`` unless the case is about ``--db``, and asserts what the CLI promises: the
exit status (2 for bad input, 1 for a task that does not exist or an operation that
failed), exactly one ``taskgui: error:`` line, never a traceback or an "internal
error", and no database (nor its folder) created by a command that was refused.

Before these fixes about fifteen of them ended in "internal error" with status 1
(ids of 2**63, deeply nested JSON, a 5,000-digit integer, ``export ""``, a worker
count past a C int, a cron start in year 9999), others were accepted (zero-width
names, a 999999999-day interval that then stopped every start), and a refused
``show`` created the database and its folders.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from taskgui.core.status import TaskSnapshot, initial_status
from taskgui.core.task import Command, TaskSpec
from taskgui.core.transfer.export_file import build_document

ROOT = Path(__file__).resolve().parents[2]
PREFIX = "taskgui: error: "
BIG_ID = str(2**63)
ID_COMMANDS = ("show", "history", "cancel", "pause", "resume", "run-now", "retry", "delete")


@dataclass(frozen=True)
class Case:
    argv: tuple[str, ...]
    status: int = 2
    stdin: str | None = None
    says: str = ""  # a phrase the error line must hold
    db: bool = False  # pass --db <tmp>/sub/taskgui.sqlite3 (whose folder must not appear)
    env: dict[str, str] = field(default_factory=dict)

    def __str__(self) -> str:
        shown = " ".join(arg if len(arg) <= 24 else arg[:23] + "…" for arg in self.argv)
        if len(shown) > 70:
            shown = shown[:69] + "…"
        return f"{shown} [{self.says}]".encode("unicode_escape").decode("ascii")


def _export(**changes: Any) -> str:
    """An export file of one valid task, with ``changes`` laid over its JSON."""
    spec = TaskSpec(
        name="imported",
        command=Command(line="true"),
        first_run_at=datetime(2030, 1, 1, tzinfo=UTC),
    )
    document = build_document([TaskSnapshot(spec, initial_status(spec))], spec.first_run_at)
    task = document["tasks"][0]
    for path, value in changes.items():
        *parents, last = path.split("__")
        target = task
        for parent in parents:
            target = target[parent]
        target[last] = value
    return json.dumps(document)


def _add(*flags: str) -> tuple[str, ...]:
    return ("add", "--name", "hostile", "--command", "true", *flags)


CASES = [
    # ids and counts past SQLite's 64-bit integers
    *(Case((command, BIG_ID), says="whole number from 1 to") for command in ID_COMMANDS),
    Case(("show", "9" * 5_000), says="whole number from 1 to"),
    Case(("history", "1", "--limit", BIG_ID), says="--limit"),
    Case(("daemon", "--workers", "2147483648"), says="from 1 to 1,024"),
    # a task that does not exist, in a database that does not exist
    Case(("show", "1"), status=1, says="no task with id 1"),
    Case(("history", "1"), status=1, says="no task with id 1"),
    Case(("cancel", "1"), status=1, says="no task with id 1"),
    # ... and in a --db folder that does not exist: the folder named, not made (a trial)
    Case(("resume", "7"), says="sub does not exist", db=True),
    # where to read and write
    Case(("--db", "", "list"), says="--db needs a file path"),
    Case(("--db", "  ", "show", "1"), says="--db needs a file path"),
    Case(("export", ""), says="export file name is empty"),
    Case(("export", "."), says="is a folder"),
    Case(("import", "."), says="cannot read .: is a directory"),  # bad input, as export's
    # durations past 100 years, and times past the calendar
    Case(_add("--every", "999999999d"), says="at most 100 years"),
    Case(_add("--retry-delay", "999999999d"), says="at most 100 years"),
    Case(_add("--retry-max-delay", "36526d"), says="at most 100 years"),
    Case(_add("--timeout", "999999999d"), says="at most 100 years"),
    Case(_add("--in", "9" * 400), says="at most 100 years"),
    Case(_add("--cron", "0 0 1 1 *", "--at", "9999-12-31T23:59+00:00"), says="year 9999"),
    Case(_add("--cron", "* * * * *", "--at", "9999-12-31T23:59:30+00:00"), says="year 9999"),
    Case(_add("--at", "9" * 200), says="cannot read"),
    # Python's fromisoformat reads 200 ones as 1111-11-11 11:11:11.111111 (outside trial).
    Case(_add("--at", "1" * 200), says="cannot read"),
    Case(_add("--at", "20260301" + "1" * 30), says="cannot read"),
    Case(_add("--at", "0001-01-01T00:00:00"), says="ends of the calendar; give a time from 0001"),
    # accepted in UTC, but in Tokyo it is past the calendar's end: the range it names holds
    Case(_add("--at", "9999-12-31T23:59"), env={"TZ": "Asia/Tokyo"}, says="to 9999-12-30"),
    Case(_add("--priority", "9" * 5_000), says="--priority"),
    # text a task cannot hold
    *(
        Case(("add", "--name", name, "--command", "true"), says="no visible character")
        for name in ("\u200b", "\u202e\u202c", "\u2066\u2069", "\ufeff", " \u3164 ")
    ),
    Case(_add("--key", "k" * 201), says="longer than 200 characters"),
    Case(_add("--env", *(f"V{index}=x" for index in range(1_001))), says="at most 1,000"),
    Case(_add("--env", *(f"V{index}=" + "x" * 120_000 for index in range(9))), says="1024 KiB"),
    # import files that are hostile as a whole, or in one field
    Case(("import", "-"), stdin="[" * 100_000 + "]" * 100_000, says="nests its JSON"),
    Case(("import", "-"), stdin='{"a": ' * 50_000 + "1" + "}" * 50_000, says="nests"),
    Case(("import", "-"), stdin='{"format": ' + "9" * 5_000 + "}", says="number too long"),
    Case(("import", "-"), stdin=_export(priority=10**4_000), says="priority"),
    Case(("import", "-"), stdin=_export(name="back\0up"), says="NUL"),
    Case(("import", "-"), stdin=_export(name="N" * 100_000), says="longer than 200 characters"),
    Case(("import", "-"), stdin=_export(name="\u200b\u200b"), says="no visible character"),
    Case(("import", "-"), stdin=_export(command__cwd="/tmp\0x"), says="NUL"),
    Case(("import", "-"), stdin=_export(command__line="a\0b"), says="NUL"),
    Case(("import", "-"), stdin=_export(command__env=[["A", "b\0"]]), says="NUL"),
    Case(("import", "-"), stdin=_export(concurrency_key="k\0"), says="NUL"),
    Case(("import", "-"), stdin=_export(concurrency_key="k" * 5_000), says="200 characters"),
    Case(
        ("import", "-"),
        stdin=_export(schedule={"v": 1, "kind": "every", "seconds": 86_400e6}),
        says="repeat interval must be at most 100 years",
    ),
    Case(
        ("import", "-"),
        stdin=_export(retry__base=86_400e6, retry__max=86_400e6),
        says="retry delay must be at most 100 years",
    ),
    Case(("import", "-"), stdin=_export(timeout_seconds=86_400e6), says="timeout must be at most"),
    Case(("import", "-"), stdin=_export(timeout_seconds=1e300), says="timeout_seconds"),
    Case(("import", "--dry-run", "-"), stdin="not json", says="not valid JSON"),
    Case(
        ("import", "/nonexistent/backup.json"),
        status=1,
        says="cannot read /nonexistent/backup.json: no such file",
    ),
    Case(("import", "--tz", "UTC", "-"), stdin="", says="--tz goes with --crontab"),
]


@pytest.fixture
def new_user(tmp_path: Path) -> dict[str, str]:
    """The environment of someone who never ran taskgui: empty XDG folders, no TASKGUI_DB."""
    environ = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("XDG_") and key != "TASKGUI_DB"
    }
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    (tmp_path / "home").mkdir()
    environ.update(
        HOME=str(tmp_path / "home"),
        XDG_DATA_HOME=str(tmp_path / "data"),
        XDG_STATE_HOME=str(tmp_path / "state"),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
        XDG_RUNTIME_DIR=str(runtime),
        PYTHONPATH=str(ROOT),
    )
    return environ


@pytest.mark.parametrize("case", CASES, ids=str)
def test_hostile_input_is_one_clear_error_and_touches_nothing(
    case: Case, new_user: dict[str, str], tmp_path: Path
) -> None:
    db_args = ("--db", str(tmp_path / "sub" / "taskgui.sqlite3")) if case.db else ()
    result = subprocess.run(
        [sys.executable, "-m", "taskgui", *db_args, *case.argv],
        input=case.stdin,
        capture_output=True,
        text=True,
        env={**new_user, **case.env},
        cwd=tmp_path / "home",
        timeout=60,
        check=False,
    )

    errors = [line for line in result.stderr.splitlines() if line.startswith(PREFIX)]
    assert result.returncode == case.status, result.stderr
    assert len(errors) == 1, result.stderr
    assert case.says in errors[0], errors[0]
    assert len(errors[0]) < 1_000, errors[0][:300]  # a pasted page is not echoed back
    assert "Traceback" not in result.stderr + result.stdout
    assert "internal error" not in result.stderr
    # Nothing was created for a command that was refused: no database, no folders.
    assert not (tmp_path / "data").exists()
    assert not (tmp_path / "sub").exists()


@pytest.mark.parametrize(
    ("argv", "stdin", "out"),
    [
        (("list",), None, "no tasks\n"),
        (("list", "--json"), None, "[]\n"),
        (("export",), None, '"tasks": []'),
        (("import", "--dry-run", "-"), _export(), "imported"),
    ],
    ids=["list", "list --json", "export", "import --dry-run"],
)
def test_reads_on_a_fresh_account_create_no_database(
    argv: tuple[str, ...], stdin: str | None, out: str, new_user: dict[str, str], tmp_path: Path
) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "taskgui", *argv],
        input=stdin,
        capture_output=True,
        text=True,
        env=new_user,
        cwd=tmp_path / "home",
        timeout=60,
        check=False,
    )

    assert (result.returncode, result.stderr) == (0, "")
    assert out in result.stdout
    assert not (tmp_path / "data").exists()


@pytest.mark.parametrize("zone", ["Asia/Tokyo", "Pacific/Kiritimati"])
def test_a_run_at_the_calendars_end_is_shown_in_utc_where_the_zone_has_no_date(
    new_user: dict[str, str], tmp_path: Path, zone: str
) -> None:
    """9999-12-31 23:59 UTC is taken; in Tokyo it is in the year 10000, which Python
    cannot hold: ``list``, ``show`` and ``history`` ended in "internal error" there."""

    def taskgui(*argv: str, tz: str = "UTC") -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "taskgui", *argv],
            capture_output=True,
            text=True,
            env={**new_user, "TZ": tz},
            cwd=tmp_path / "home",
            timeout=60,
            check=False,
        )

    added = taskgui(*_add("--at", "9999-12-31T23:59+00:00"))
    assert added.returncode == 0, added.stderr
    for argv in (("list",), ("show", "1"), ("history", "1")):
        result = taskgui(*argv, tz=zone)
        assert result.returncode == 0, result.stderr
        assert "internal error" not in result.stderr
    assert "9999-12-31 23:59:00 UTC" in taskgui("list", tz=zone).stdout
