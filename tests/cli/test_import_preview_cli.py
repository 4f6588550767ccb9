"""``taskgui import --dry-run`` of someone else's file says what would run, and when.

The file is written by another database (as a colleague's export would be), then
previewed by the real program in a subprocess: the report lists each task's folder
and environment, marks the variables that change which code runs, says which tasks
run the moment they are imported, and that the commands run as you.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers.cli import program

RUNS_AS_YOU = (
    "Importing runs these commands as you, in their folders and with their environment: "
    "import only a file you trust."
)


def untrusted_file(tmp_path: Path) -> Path:
    theirs = tmp_path / "theirs.sqlite3"
    for args in (
        ("--name", "backup", "--command", "tar czf /tmp/b.tgz ~", "--cwd", "/srv",
         "--env", "LD_PRELOAD=/tmp/evil.so", "--env", "LANG=C", "--in", "2h"),
        ("--name", "report", "--command", "mail -s hi me", "--at", "2001-01-01T00:00:00Z"),
    ):  # fmt: skip
        added = program(theirs, "add", *args)
        assert added.returncode == 0, added.stderr
    file = tmp_path / "tasks.json"
    assert program(theirs, "export", str(file)).returncode == 0
    return file


def test_the_dry_run_shows_folder_environment_and_what_runs_at_once(tmp_path: Path) -> None:
    file = untrusted_file(tmp_path)
    mine = tmp_path / "mine.sqlite3"

    preview = program(mine, "import", "--dry-run", str(file))

    assert preview.returncode == 0, preview.stderr
    lines = preview.stdout.splitlines()
    backup = lines.index("  + backup: once")
    assert lines[backup + 1 : backup + 4] == [
        "      $ tar czf /tmp/b.tgz ~",
        "      folder: /srv",
        "      env: LANG=C, LD_PRELOAD=/tmp/evil.so (!)",
    ]
    report = lines.index("  + report: once")
    assert lines[report + 2] == "      starts: at once (its start has passed)"
    caution = lines.index("Caution:")
    assert lines[caution + 1 :] == [
        f"  ! {RUNS_AS_YOU}",
        "  ! 1 task runs as soon as it is imported, because its start has passed: “report”",
        "  ! 1 task sets variables that change which programs, libraries or startup files "
        "run: “backup” sets LD_PRELOAD",
    ]
    assert program(mine, "list", "--json").stdout.strip() == "[]"  # a dry run adds nothing


def test_the_json_report_has_the_same_facts(tmp_path: Path) -> None:
    file = untrusted_file(tmp_path)

    result = program(tmp_path / "mine.sqlite3", "import", "--dry-run", "--json", str(file))

    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    by_name = {task["name"]: task for task in report["added"]}
    assert by_name["backup"]["cwd"] == "/srv"
    assert by_name["backup"]["env"] == {"LANG": "C", "LD_PRELOAD": "/tmp/evil.so"}
    assert by_name["backup"]["risky_env"] == ["LD_PRELOAD"]
    assert [by_name[name]["runs_at_once"] for name in ("backup", "report")] == [False, True]
    assert report["cautions"][0] == RUNS_AS_YOU
