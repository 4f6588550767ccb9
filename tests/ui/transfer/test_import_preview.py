"""The import preview says what the file's tasks run, where, with what, and when.

A real ``ReportDialog`` over a real plan: next to each command the preview shows its
folder and environment (risky variables marked and in red), when it first runs (in
red when that is at once), and above the table, in words, that importing runs these
commands as you and which tasks run at once or set risky variables.
"""

from __future__ import annotations

from datetime import timedelta

from PySide6.QtWidgets import QTableWidget
from pytestqt.qtbot import QtBot

from taskgui.core.task import Command, TaskSpec
from taskgui.core.transfer.plan import Candidate, ParsedImport, plan_import
from taskgui.ui.transfer.dialogs import ReportDialog
from tests.helpers.factories import T0, make_spec

HOUR = timedelta(hours=1)
ADDED_HEADERS = ("Name", "Schedule", "Starts", "Command", "Folder", "Environment")
RUNS_AS_YOU = (
    "Importing runs these commands as you, in their folders and with their environment: "
    "import only a file you trust."
)


def preview(qtbot: QtBot, *specs: TaskSpec) -> ReportDialog:
    parsed = ParsedImport(
        candidates=tuple(Candidate(f"task {n}", s.name, s) for n, s in enumerate(specs, 1))
    )
    dialog = ReportDialog(title="Import tasks.json", replan=lambda _: plan_import(parsed, [], T0))
    qtbot.addWidget(dialog)
    return dialog


def row(table: QTableWidget, number: int) -> dict[str, str]:
    cells = {}
    for column, header in enumerate(ADDED_HEADERS):
        item = table.item(number, column)
        assert item is not None
        cells[header] = item.text()
    return cells


def test_each_task_shows_its_folder_environment_and_first_run(qtbot: QtBot) -> None:
    risky = make_spec(
        0,
        name="backup",
        command=Command(line="tar czf b.tgz ~", cwd="/srv", env=(("PATH", "/tmp"), ("LANG", "C"))),
        first_run_at=T0 + HOUR,
    )
    late = make_spec(0, name="report", first_run_at=T0 - HOUR)
    dialog = preview(qtbot, risky, late)

    assert row(dialog.added, 0) == {
        "Name": "backup",
        "Schedule": "once",
        "Starts": "on schedule",
        "Command": "tar czf b.tgz ~",
        "Folder": "/srv",
        "Environment": "⚠ PATH=/tmp; LANG=C",  # the risky ones first
    }
    assert row(dialog.added, 1)["Starts"] == "at once (its start has passed)"
    assert row(dialog.added, 1)["Folder"] == "home folder"
    env = dialog.added.item(0, ADDED_HEADERS.index("Environment"))
    starts = dialog.added.item(1, ADDED_HEADERS.index("Starts"))
    calm = dialog.added.item(0, ADDED_HEADERS.index("Starts"))
    assert env is not None and starts is not None and calm is not None
    assert env.toolTip() == "⚠ PATH=/tmp\nLANG=C"  # one variable a line
    assert env.font().bold() and starts.font().bold() and not calm.font().bold()
    assert env.foreground().color() == starts.foreground().color() != calm.foreground().color()


def test_the_preview_says_the_commands_run_as_you(qtbot: QtBot) -> None:
    risky = make_spec(
        0, name="sync", command=Command(line="rsync", env=(("LD_PRELOAD", "/tmp/x.so"),)),
        first_run_at=T0 + HOUR,
    )  # fmt: skip
    late = make_spec(0, name="report", first_run_at=T0 - HOUR)
    dialog = preview(qtbot, risky, late)
    dialog.show()
    qtbot.waitExposed(dialog)

    assert dialog.cautions.isVisible()
    lines = dialog.cautions.text().splitlines()
    assert lines[0] == f"⚠ {RUNS_AS_YOU}"
    assert "runs as soon as it is imported" in lines[1] and "“report”" in lines[1]
    assert "“sync” sets LD_PRELOAD" in lines[2]


def test_a_harmless_file_still_says_whose_commands_run(qtbot: QtBot) -> None:
    dialog = preview(qtbot, make_spec(0, name="tidy", first_run_at=T0 + HOUR))
    dialog.show()
    qtbot.waitExposed(dialog)
    assert dialog.cautions.text() == f"⚠ {RUNS_AS_YOU}"


def test_nothing_to_import_needs_no_caution(qtbot: QtBot) -> None:
    dialog = preview(qtbot)
    dialog.show()
    qtbot.waitExposed(dialog)
    assert not dialog.cautions.isVisible()
