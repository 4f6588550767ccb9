"""``taskgui export`` and ``taskgui import`` as scripts and people use them.

In-process through ``cli.main`` with a FakeClock for the rules; the real program in a
subprocess where it matters (a pipe into ``import --crontab -``, a scheduler holding
the lock in another process).
"""

from __future__ import annotations

import io
import json
import os
import pwd
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from taskgui.cli import main as cli
from taskgui.core.clock import FakeClock
from taskgui.store.sqlite.lock import is_locked
from tests.helpers.cli import Result, Run
from tests.helpers.factories import T0
from tests.helpers.processes import request_server
from tests.helpers.store import raw_connection

ROOT = Path(__file__).resolve().parents[2]

CRONTAB = r"""MAILTO=me@example.com
PATH=/usr/bin:/bin
# Nightly backup
30 2 * * * rsync -a ~/docs /mnt/backup
*/5 * * * * date +\%s >> /tmp/stamps
@reboot /usr/bin/agent
complete garbage here
@daily echo %oops
"""


@pytest.fixture
def run(db: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> Run:
    """``cli.main`` in-process at T0; ``stdin`` is what the command reads from '-'."""

    def invoke(*args: str, stdin: str = "", database: Path | None = None) -> Result:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
        code = cli.main(["--db", str(database or db), *args], clock=FakeClock(T0))
        captured = capsys.readouterr()
        return Result(code, captured.out, captured.err)

    return invoke


def program(
    db: Path, *args: str, stdin: str | None = None, timeout: float = 30
) -> subprocess.CompletedProcess[str]:
    environ = {**os.environ, "PYTHONPATH": str(ROOT), "TZ": "UTC"}
    return subprocess.run(
        [sys.executable, "-m", "taskgui", "--db", str(db), *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=environ,
        timeout=timeout,
        check=False,
    )


def add(run: Run, name: str, *flags: str, database: Path | None = None) -> int:
    result = run("add", "--name", name, "--command", f"echo {name}", *flags, database=database)
    assert result.code == 0, result.err
    return int(result.out)


def listing(run: Run, database: Path | None = None) -> list[dict[str, Any]]:
    result = run("list", "--json", database=database)
    assert result.code == 0, result.err
    tasks: list[dict[str, Any]] = result.json()
    return tasks


def definitions(document: dict[str, Any]) -> list[dict[str, Any]]:
    return [{k: v for k, v in task.items() if k != "id"} for task in document["tasks"]]


def populate(run: Run) -> None:
    add(run, "once", "--in", "1h", "--priority", "5", "--timeout", "90s", "--key", "k")
    add(run, "every", "--every", "5m", "--fixed-delay", "--max-attempts", "1", "--paused")
    add(run, "cron", "--cron", "30 2 * * 1-5", "--tz", "Europe/Berlin", "--jitter")
    add(run, "env", "--env", "A=1", "B=two words", "--cwd", "/tmp", "--no-shell")


def error_line(result: Result) -> str:
    assert result.err.startswith("taskgui: error: ") and result.err.count("\n") == 1
    return result.err


# -------------------------------------------------------------------------- help


@pytest.mark.parametrize("command", ["export", "import"])
def test_both_commands_have_help_with_examples(
    command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main([command, "--help"]) == 0
    out = capsys.readouterr().out
    assert f"taskgui {command}" in out.split("examples:")[1]


def test_import_help_describes_the_rules(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["import", "--help"]) == 0
    text = capsys.readouterr().out
    for phrase in ("one", "--replace", "--dry-run", "--crontab", "@reboot", "CRON_TZ", "FILE"):
        assert phrase in text


# ------------------------------------------------------------------------ export


def test_export_writes_json_to_stdout(run: Run) -> None:
    populate(run)
    result = run("export")

    assert result.code == 0 and result.err == ""
    document = result.json()
    assert document["format"] == "taskgui-export" and document["version"] == 1
    assert document["exported_at"] == "2026-01-01T12:00:00+00:00"
    assert [task["name"] for task in document["tasks"]] == ["once", "every", "cron", "env"]
    assert "runs" not in document
    assert run("export", "-").out == result.out


def test_export_to_a_file_is_private_and_says_so(run: Run, tmp_path: Path) -> None:
    populate(run)
    target = tmp_path / "out.json"
    target.write_text("old content")
    target.chmod(0o644)

    result = run("export", str(target))

    assert (result.code, result.out) == (0, f"exported 4 tasks to {target}\n")
    assert stat.S_IMODE(target.stat().st_mode) == 0o600
    assert json.loads(target.read_text())["tasks"][0]["name"] == "once"
    assert not [path for path in tmp_path.iterdir() if path.name.endswith(".tmp")]


def test_export_with_history_adds_every_run(run: Run) -> None:
    task_id = add(run, "job")
    plain = run("export").json()
    full = run("export", "--with-history").json()

    assert full["tasks"] == plain["tasks"]
    assert full["runs"] == {str(task_id): []}


def test_export_of_an_empty_database_is_a_valid_empty_export(run: Run, tmp_path: Path) -> None:
    exported = run("export").out
    (tmp_path / "empty.json").write_text(exported)
    result = run("import", str(tmp_path / "empty.json"))
    assert (result.code, result.out) == (0, "Added no tasks.\n")


# ------------------------------------------------------------------------ import


def test_export_then_import_into_an_empty_database_gives_the_same_definitions(
    run: Run, tmp_path: Path
) -> None:
    populate(run)
    file = tmp_path / "tasks.json"
    assert run("export", str(file)).code == 0
    other = tmp_path / "other.sqlite3"

    result = run("import", str(file), database=other)

    assert result.code == 0, result.err
    assert result.out.startswith("Added 4 tasks:\n  + once: once\n")
    original = run("export").json()
    copied = run("export", database=other).json()
    assert definitions(copied) == definitions(original)


def test_import_skips_existing_names_and_says_why(run: Run, tmp_path: Path) -> None:
    populate(run)
    file = tmp_path / "tasks.json"
    run("export", str(file))
    add(run, "new one")

    result = run("import", str(file))

    assert result.code == 0
    assert result.out.startswith("Added no tasks.\nSkipped 4:\n")
    assert "  ! task 3: cron\n      a task named 'cron' already exists (task 3); use --replace" in (
        result.out
    )
    assert len(listing(run)) == 5


def test_import_replace_deletes_the_old_tasks(run: Run, db: Path, tmp_path: Path) -> None:
    populate(run)
    file = tmp_path / "tasks.json"
    run("export", str(file))

    result = run("import", "--replace", str(file))

    assert result.code == 0, result.err
    assert "Deleted 4 existing tasks replaced by imported ones" in result.out
    assert [task["id"] for task in listing(run)] == [5, 6, 7, 8]
    assert [task["name"] for task in listing(run)] == ["once", "every", "cron", "env"]
    assert not is_locked(db)  # the lock taken to delete was let go


def test_dry_run_changes_nothing(run: Run, tmp_path: Path) -> None:
    populate(run)
    file = tmp_path / "tasks.json"
    run("export", str(file))
    other = tmp_path / "other.sqlite3"

    result = run("import", "--dry-run", str(file), database=other)
    replacing = run("import", "--dry-run", "--replace", str(file))

    assert result.code == 0 and result.out.startswith("Would add 4 tasks:")
    assert listing(run, other) == []
    assert "Would delete 4 existing tasks" in replacing.out
    assert [task["id"] for task in listing(run)] == [1, 2, 3, 4]


def test_import_json_report(run: Run, tmp_path: Path) -> None:
    add(run, "a")
    add(run, "b")
    file = tmp_path / "tasks.json"
    run("export", str(file))
    run("delete", "2")

    result = run("import", "--json", str(file))
    dry = run("import", "--json", "--dry-run", str(file))

    report = result.json()
    assert report["preview"] is False
    [added] = report["added"]
    assert {key: added[key] for key in ("name", "schedule", "command")} == {
        "name": "b",
        "schedule": "once",
        "command": "echo b",
    }
    assert (added["cwd"], added["env"], added["risky_env"]) == (None, {}, [])
    assert report["ids"] == [3]
    assert [item["where"] for item in report["skipped"]] == ["task 1"]
    assert dry.json()["preview"] is True and "ids" not in dry.json()


def test_a_file_from_a_newer_taskgui_is_refused(run: Run, tmp_path: Path) -> None:
    add(run, "a")
    document = run("export").json()
    document["version"] = 7
    file = tmp_path / "new.json"
    file.write_text(json.dumps(document))

    result = run("import", str(file), database=tmp_path / "other.sqlite3")

    assert result.code == 2
    assert "written by a newer taskgui (version 7)" in error_line(result)
    assert str(file) in result.err


def test_malformed_json_names_the_line_and_column(run: Run, tmp_path: Path) -> None:
    file = tmp_path / "bad.json"
    file.write_text('{\n  "format": "taskgui-export",\n  "version": 1\n  "tasks": []\n}\n')

    result = run("import", str(file))

    assert result.code == 2
    assert "not valid JSON: line 4, column 3" in error_line(result)


def test_one_invalid_task_means_nothing_is_added(run: Run, tmp_path: Path) -> None:
    populate(run)
    document = run("export").json()
    document["tasks"][1]["retry"]["max_attempts"] = 0
    file = tmp_path / "tasks.json"
    file.write_text(json.dumps(document))
    other = tmp_path / "other.sqlite3"

    result = run("import", str(file), database=other)

    assert result.code == 2
    assert "task 2 ('every'): field 'retry.max_attempts': max attempts must be" in error_line(
        result
    )
    assert listing(run, other) == []


def test_import_of_a_missing_file_names_it(run: Run, tmp_path: Path) -> None:
    result = run("import", str(tmp_path / "nope.json"))
    assert result.code == 1
    assert "nope.json" in error_line(result)


def test_export_into_a_missing_folder_names_the_file(run: Run, tmp_path: Path) -> None:
    target = tmp_path / "no such folder" / "out.json"
    result = run("export", str(target))
    assert result.code == 1
    assert error_line(result) == f"taskgui: error: No such file or directory ({target})\n"


def test_tz_goes_with_crontab(run: Run, tmp_path: Path) -> None:
    result = run("import", "--tz", "UTC", str(tmp_path / "x.json"))
    assert (result.code, "--tz goes with --crontab" in result.err) == (2, True)


# ----------------------------------------------------------------------- crontab


def test_crontab_from_stdin_becomes_cron_tasks_and_reports_every_skip(run: Run) -> None:
    result = run("import", "--crontab", "--tz", "Europe/Berlin", "-", stdin=CRONTAB)

    assert result.code == 0, result.err
    out = result.out
    assert out.startswith("Added 2 tasks:\n  + Nightly backup: At 02:30 (Europe/Berlin)\n")
    assert "  ! line 6: @reboot /usr/bin/agent\n" in out
    assert "  ! line 7: complete garbage here\n      not a crontab entry" in out
    assert "  ! line 8: @daily echo %oops\n      uses %" in out
    assert "MAILTO=me@example.com (line 1) is not applied" in out
    tasks = {task["name"]: task for task in listing(run)}
    assert set(tasks) == {"Nightly backup", "date +%s >> /tmp/stamps"}
    backup = tasks["Nightly backup"]
    assert backup["recurrence"] == {"kind": "cron", "expr": "30 2 * * *", "tz": "Europe/Berlin"}
    assert backup["env"] == {"PATH": "/usr/bin:/bin"}
    assert backup["max_attempts"] == 1
    assert backup["next_run_at"] == "2026-01-02T01:30:00.000+00:00"


def test_crontab_import_twice_skips_what_is_there(run: Run) -> None:
    run("import", "--crontab", "--tz", "UTC", "-", stdin=CRONTAB)
    again = run("import", "--crontab", "--tz", "UTC", "-", stdin=CRONTAB)

    assert again.out.startswith("Added no tasks.\nSkipped 5:")
    assert "  ! line 4: 30 2 * * * rsync -a ~/docs /mnt/backup\n" in again.out
    assert len(listing(run)) == 2


def test_crontab_dry_run_shows_what_would_be_created(run: Run, tmp_path: Path) -> None:
    file = tmp_path / "crontab"
    file.write_text(CRONTAB)

    result = run("import", "--crontab", "--dry-run", "--tz", "UTC", str(file))

    assert result.out.startswith("Would add 2 tasks:")
    assert listing(run) == []


def test_crontab_l_piped_into_the_real_program(db: Path) -> None:
    result = program(db, "import", "--crontab", "-", stdin=CRONTAB)

    assert result.returncode == 0, result.stderr
    assert "Added 2 tasks:" in result.stdout and "(UTC)" in result.stdout
    listed = program(db, "list", "--json")
    assert sorted(task["name"] for task in json.loads(listed.stdout)) == [
        "Nightly backup",
        "date +%s >> /tmp/stamps",
    ]


ME = pwd.getpwuid(os.getuid()).pw_name
SYSTEM_CRONTAB = f"""SHELL=/bin/bash
# m h dom mon dow user  command
17 * * * * {ME} cd / && source ~/.profile
25 6 * * * nobody-else-here run-parts /etc/cron.daily
"""


def test_a_system_crontab_by_option_imports_my_lines_without_the_user(run: Run) -> None:
    result = run(
        "import", "--crontab", "--system-crontab", "--tz", "UTC", "-", stdin=SYSTEM_CRONTAB
    )

    assert result.code == 0, result.err
    assert f"the lines for {ME} are imported without the user name" in result.out
    assert "  ! line 4: 25 6 * * * nobody-else-here run-parts /etc/cron.daily\n" in result.out
    assert "runs as the user nobody-else-here" in result.out
    [task] = listing(run)
    assert task["command"] == "cd / && source ~/.profile"
    assert task["shell_path"] == "/bin/bash"
    shown = run("show", str(task["id"]))
    assert "yes (/bin/bash)" in shown.out


def test_without_the_option_the_same_file_reads_as_a_user_crontab(run: Run) -> None:
    # 'nobody-else-here' is no account, so the user column is not recognised, and
    # --user-crontab says so outright: the user becomes part of the command, as cron
    # would run it from 'crontab -e'.
    for flags in ((), ("--user-crontab",)):
        result = run("import", "--crontab", "--dry-run", *flags, "-", stdin=SYSTEM_CRONTAB)
        assert result.code == 0, result.err
        assert "system crontab" not in result.out
        assert f"+ {ME} cd / && source ~/.profile" in result.out


def test_the_crontab_kind_options_go_with_crontab(run: Run, tmp_path: Path) -> None:
    result = run("import", "--system-crontab", str(tmp_path / "x.json"))
    assert (result.code, "--system-crontab goes with --crontab" in result.err) == (2, True)
    both = run("import", "--crontab", "--system-crontab", "--user-crontab", "-")
    assert both.code == 2


def test_a_stored_task_with_a_refused_schedule_is_shown_paused_with_the_fix(
    run: Run, db: Path
) -> None:
    added = run("add", "--name", "old", "--command", "true", "--cron", "0 9 * * *")
    assert added.code == 0, added.err
    with raw_connection(db) as other:
        other.execute(
            "UPDATE tasks SET recurrence = ? WHERE id = 1",
            ('{"v":1,"kind":"cron","expr":"0 22-2 * * *","tz":"UTC"}',),
        )

    [task] = listing(run)
    assert task["state"] == "paused"
    shown = run("show", "1")
    assert "not running: cron '0 22-2 * * *' (UTC) is refused" in shown.out
    assert "write two ranges: '22-23,0-2'" in shown.out
    resumed = run("resume", "1")
    assert resumed.code == 1
    assert "cannot resume: its schedule is refused" in resumed.err


# ------------------------------------------------------- with a scheduler running


@pytest.fixture
def scheduler(db: Path) -> Iterator[subprocess.Popen[str]]:
    """A separate process holding the scheduler lock and answering requests."""
    with request_server(db) as child:
        yield child


def test_import_reaches_a_running_scheduler(
    db: Path, tmp_path: Path, scheduler: subprocess.Popen[str]
) -> None:
    assert is_locked(db)
    old = program(db, "add", "--name", "backup", "--command", "old", "--in", "1h")
    assert old.returncode == 0, old.stderr
    file = tmp_path / "tasks.json"
    exported = json.loads(program(db, "export").stdout)
    exported["tasks"][0]["command"]["line"] = "new"
    exported["tasks"].append({**exported["tasks"][0], "name": "extra"})
    file.write_text(json.dumps(exported))

    first = {**exported, "tasks": [{**exported["tasks"][0], "name": "first"}]}
    (tmp_path / "first.json").write_text(json.dumps(first))
    added = program(db, "import", str(tmp_path / "first.json"))
    assert added.returncode == 0, added.stderr
    result = program(db, "import", "--replace", str(file))

    assert result.returncode == 0, result.stderr
    assert "Deleted 1 existing task" in result.stdout
    listed = json.loads(program(db, "list", "--json").stdout)
    assert {task["name"]: task["id"] for task in listed} == {"first": 2, "backup": 3, "extra": 4}
    # The scheduler knows the new tasks (it can pause them) and no longer the old one.
    for task_id in (2, 3, 4):
        paused = program(db, "pause", str(task_id))
        assert paused.returncode == 0, paused.stderr
    assert program(db, "pause", "1").returncode == 1


@pytest.mark.parametrize("source", ["/dev/zero", "-"])
def test_an_endless_import_is_refused_not_read_for_ever(db: Path, source: str) -> None:
    """/dev/zero as the file, or as stdin: one line, exit 2, within the limit's reading
    (before, it took 8.5 GB in 10 s and never ended)."""
    environ = {**os.environ, "PYTHONPATH": str(ROOT), "TZ": "UTC"}
    with open("/dev/zero", "rb") as zeros:
        result = subprocess.run(
            [sys.executable, "-m", "taskgui", "--db", str(db), "import", "--dry-run", source],
            stdin=zeros,
            capture_output=True,
            text=True,
            env=environ,
            timeout=60,
            check=False,
        )
    assert result.returncode == 2, result.stderr
    assert "is larger than 256 MB" in result.stderr
    assert len(result.stderr.splitlines()) == 1


def test_a_no_shell_command_that_cannot_be_split_is_refused_at_add(run: Run) -> None:
    result = run("add", "--name", "c", "--command", "echo 'unbalanced", "--no-shell")
    assert result.code == 2
    assert "cannot be split into words (no closing quotation)" in result.err
    assert run("list", "--json").out.strip() == "[]"
