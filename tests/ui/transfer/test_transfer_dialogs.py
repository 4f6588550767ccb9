"""File → Import…, Import Crontab…, Export… over a real scheduler and database.

File pickers, message boxes and ``QDialog.exec`` are injected: a test answers each
dialog the way a person would (reads the preview, ticks the box, presses Import) and
the real dialogs, service and database do the rest.
"""

from __future__ import annotations

import json
import stat
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QDialog, QDialogButtonBox, QTableWidget, QWidget
from pytestqt.qtbot import QtBot

from taskgui.core.clock import SystemClock
from taskgui.core.recurrence import Cron, Every
from taskgui.core.retry import RetryPolicy
from taskgui.core.states import RunOutcome
from taskgui.core.task import Command, TaskSpec
from taskgui.core.transfer.report import TransferReport
from taskgui.runtime.service import SchedulerService
from taskgui.store.sqlite.repository import SqliteRepository
from taskgui.ui.transfer.actions import TransferActions
from taskgui.ui.transfer.dialogs import CrontabDialog, ReportDialog

CLOCK = SystemClock()
ACCEPTED = QDialog.DialogCode.Accepted.value
REJECTED = QDialog.DialogCode.Rejected.value
Answer = Callable[[QDialog], int]


def spec(name: str, **fields: Any) -> TaskSpec:
    values: dict[str, Any] = {
        "name": name,
        "command": Command(line=f"echo {name}"),
        "first_run_at": CLOCK.now() + timedelta(hours=1),
        "retry": RetryPolicy.no_retry(),
    }
    values.update(fields)
    return TaskSpec(**values)


class Person:
    """Answers pickers and dialogs from scripts, and keeps what it was shown."""

    def __init__(self) -> None:
        self.paths: list[str | None] = []
        self.answers: list[Answer] = []
        self.dialogs: list[QDialog] = []
        self.errors: list[str] = []
        self.infos: list[str] = []

    def pick(self, parent: QWidget, caption: str, filters: str) -> str | None:
        return self.paths.pop(0)

    def run_dialog(self, dialog: QDialog) -> int:
        self.dialogs.append(dialog)
        return self.answers.pop(0)(dialog)

    def error(self, parent: QWidget, title: str, text: str) -> None:
        self.errors.append(text)

    def info(self, parent: QWidget, title: str, text: str) -> None:
        self.infos.append(text)


def cell(table: QTableWidget, row: int, column: int) -> str:
    item = table.item(row, column)
    assert item is not None
    return item.text()


def press_import(dialog: QDialog) -> int:
    assert isinstance(dialog, ReportDialog)
    assert dialog.import_button.isEnabled()
    dialog.import_button.click()
    return dialog.result()


def close(dialog: QDialog) -> int:
    assert isinstance(dialog, ReportDialog)
    assert dialog.buttons.standardButtons() == QDialogButtonBox.StandardButton.Close
    return REJECTED


def cancel(dialog: QDialog) -> int:
    return REJECTED


class Desk:
    """A scheduler over its own database file, and the actions of its File menu."""

    def __init__(self, path: Path, qtbot: QtBot, person: Person) -> None:
        self.qtbot = qtbot
        self.repository = SqliteRepository(path)
        self.service = SchedulerService(self.repository, CLOCK, workers=1, kill_grace=0.3)
        self.service.start()
        self.window = QWidget()
        qtbot.addWidget(self.window)
        self.actions = TransferActions(
            self.window,
            self.service,
            CLOCK,
            open_file=person.pick,
            save_file=person.pick,
            error=person.error,
            info=person.info,
            run_dialog=person.run_dialog,
            local_zone=lambda: "Asia/Tokyo",
        )

    def definitions(self) -> list[TaskSpec]:
        snapshots = sorted(self.service.snapshot(), key=lambda snapshot: snapshot.id)
        return [snapshot.spec.with_id(0) for snapshot in snapshots]

    def names(self) -> dict[int, str]:
        return {snapshot.id: snapshot.spec.name for snapshot in self.service.snapshot()}

    def close(self) -> None:
        with self.qtbot.waitSignal(self.service.stopped, timeout=10_000):
            self.service.shutdown(grace=0.0)
        self.service.pool.wait_for_done(5_000)
        self.repository.close()


@pytest.fixture
def person() -> Person:
    return Person()


@pytest.fixture
def desks(tmp_path: Path, qtbot: QtBot, person: Person) -> Iterator[tuple[Desk, Desk]]:
    here, there = (
        Desk(tmp_path / "a.sqlite3", qtbot, person),
        Desk(tmp_path / "b.sqlite3", qtbot, person),
    )
    yield here, there
    here.close()
    there.close()


def fill(desk: Desk) -> None:
    desk.service.add_tasks(
        [
            spec("report", priority=3),
            spec("sync", recurrence=Every(timedelta(minutes=5)), paused=True),
            spec("backup", recurrence=Cron("30 2 * * *", "Europe/Berlin")),
        ]
    )


def test_export_then_import_on_another_desk_gives_the_same_definitions(
    desks: tuple[Desk, Desk], person: Person, tmp_path: Path
) -> None:
    here, there = desks
    fill(here)
    target = tmp_path / "tasks"  # no suffix: .json is added
    person.paths = [str(target), str(target) + ".json"]
    person.answers = [press_import, close]

    with here.qtbot.waitSignal(here.actions.exported) as exported:
        here.actions.export_action.trigger()
    assert exported.args == [str(target) + ".json"]
    assert person.infos == [f"Exported 3 tasks to {target}.json"]
    assert stat.S_IMODE(Path(str(target) + ".json").stat().st_mode) == 0o600

    with there.qtbot.waitSignal(there.actions.imported) as imported:
        there.actions.import_action.trigger()

    assert person.errors == []
    assert there.definitions() == here.definitions()
    preview, summary = person.dialogs
    assert isinstance(preview, ReportDialog) and isinstance(summary, ReportDialog)
    assert preview.headline.text() == "3 tasks to add, 0 skipped"
    assert preview.added.rowCount() == 3 and preview.skipped.isHidden()
    assert cell(preview.added, 2, 0) == "backup"
    assert summary.headline.text() == "3 tasks added, 0 skipped"
    report = imported.args[0]
    assert isinstance(report, TransferReport) and not report.preview


def test_export_with_history_includes_the_runs(
    desks: tuple[Desk, Desk], person: Person, tmp_path: Path, qtbot: QtBot
) -> None:
    here, _ = desks
    [task] = here.service.add_tasks([spec("quick", command=Command(line="true"))])
    with qtbot.waitSignal(here.service.run_finished, timeout=10_000):
        here.service.run_now(task.id)
    person.paths = [str(tmp_path / "history.json")]

    here.actions.export_history_action.trigger()

    document = json.loads((tmp_path / "history.json").read_text())
    [run] = document["runs"][str(task.id)]
    assert run["outcome"] == RunOutcome.SUCCEEDED.value


def test_existing_names_are_skipped_unless_replace_is_ticked(
    desks: tuple[Desk, Desk], person: Person, tmp_path: Path
) -> None:
    here, there = desks
    fill(here)
    person.paths = [str(tmp_path / "t.json")]
    here.actions.export()
    [old] = there.service.add_tasks([spec("sync"), spec("mine")])[:1]
    seen: dict[str, Any] = {}

    def tick_replace(dialog: QDialog) -> int:
        assert isinstance(dialog, ReportDialog)
        seen["before"] = dialog.headline.text()
        seen["reason"] = cell(dialog.skipped, 0, 2)
        dialog.replace_box.setChecked(True)
        seen["after"] = dialog.headline.text()
        seen["replaced"] = dialog.replaced.text()
        return press_import(dialog)

    person.paths = [str(tmp_path / "t.json")]
    person.answers = [tick_replace, close]
    there.actions.import_action.trigger()

    assert seen["before"] == "2 tasks to add, 1 skipped"
    assert seen["reason"].startswith("a task named 'sync' already exists")
    assert "Replace tasks with the same name" in seen["reason"]
    assert seen["after"] == "3 tasks to add, 1 to replace, 0 skipped"
    assert seen["replaced"] == f"Will delete (replaced by imported tasks): task {old.id} “sync”"
    names = there.names()
    assert old.id not in names
    assert sorted(names.values()) == ["backup", "mine", "report", "sync"]


def test_cancelling_the_preview_writes_nothing(
    desks: tuple[Desk, Desk], person: Person, tmp_path: Path
) -> None:
    here, there = desks
    fill(here)
    person.paths = [str(tmp_path / "t.json"), str(tmp_path / "t.json")]
    here.actions.export()
    person.answers = [cancel]

    assert there.actions.import_file() is None
    assert there.definitions() == [] and len(person.dialogs) == 1


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ('{\n  "format": "taskgui-export",\n  "version": 1,\n  "tasks": [,]\n}', "line 4, column"),
        ('{"format": "taskgui-export", "version": 3, "tasks": []}', "newer taskgui (version 3)"),
    ],
)
def test_a_broken_file_is_explained_and_nothing_is_shown_or_added(
    desks: tuple[Desk, Desk], person: Person, tmp_path: Path, content: str, expected: str
) -> None:
    _, there = desks
    (tmp_path / "bad.json").write_text(content)
    person.paths = [str(tmp_path / "bad.json")]

    there.actions.import_action.trigger()  # the slot: errors become messages

    [message] = person.errors
    assert expected in message
    assert person.dialogs == [] and there.definitions() == []


def test_one_invalid_task_lists_every_problem_and_adds_nothing(
    desks: tuple[Desk, Desk], person: Person, tmp_path: Path
) -> None:
    here, there = desks
    fill(here)
    person.paths = [str(tmp_path / "t.json")]
    here.actions.export()
    document = json.loads((tmp_path / "t.json").read_text())
    document["tasks"][0]["retry"]["max_attempts"] = 0
    document["tasks"][2]["schedule"]["tz"] = "Mars/Olympus"
    (tmp_path / "t.json").write_text(json.dumps(document))
    person.paths = [str(tmp_path / "t.json")]

    there.actions.import_action.trigger()

    [message] = person.errors
    assert message.splitlines()[0].startswith("task 1 ('report'): field 'retry.max_attempts'")
    assert message.splitlines()[1].startswith("task 3 ('backup'): field 'schedule.tz'")
    assert there.definitions() == []


CRONTAB = """PATH=/usr/bin:/bin
# Tidy downloads
0 3 * * * find ~/Downloads -mtime +30 -delete
@reboot /usr/bin/agent
not a cron line
"""


def test_a_pasted_crontab_is_previewed_then_imported(
    desks: tuple[Desk, Desk], person: Person
) -> None:
    _, there = desks
    seen: dict[str, Any] = {}

    def paste(dialog: QDialog) -> int:
        assert isinstance(dialog, CrontabDialog)
        assert not dialog.preview_button.isEnabled()
        dialog.editor.setPlainText(CRONTAB)
        assert dialog.preview_button.isEnabled()
        dialog.preview_button.click()
        return dialog.result()

    def read_preview(dialog: QDialog) -> int:
        assert isinstance(dialog, ReportDialog)
        skipped = dialog.skipped
        seen["skipped"] = [
            tuple(cell(skipped, row, column) for column in range(3))
            for row in range(skipped.rowCount())
        ]
        seen["notes"] = dialog.notes.text()
        return press_import(dialog)

    person.answers = [paste, read_preview, close]
    report = there.actions.import_crontab()

    assert report is not None and len(report.added) == 1
    where = [(row[0], row[1]) for row in seen["skipped"]]
    assert where == [("line 4", "@reboot /usr/bin/agent"), ("line 5", "not a cron line")]
    assert "no retries" in seen["notes"]
    [task] = there.definitions()
    assert task.name == "Tidy downloads"
    assert task.recurrence == Cron("0 3 * * *", "Asia/Tokyo")
    assert task.command.env_dict == {"PATH": "/usr/bin:/bin"}


def test_a_crontab_can_be_loaded_from_a_file(
    desks: tuple[Desk, Desk], person: Person, tmp_path: Path
) -> None:
    _, there = desks
    (tmp_path / "crontab").write_text(CRONTAB)
    person.paths = [str(tmp_path / "missing"), str(tmp_path / "crontab")]
    loaded: list[str] = []

    def load(dialog: QDialog) -> int:
        assert isinstance(dialog, CrontabDialog)
        dialog.load_button.click()  # the first path does not exist: explained
        dialog.load_button.click()
        loaded.append(dialog.text())
        return REJECTED

    person.answers = [load]
    assert there.actions.import_crontab() is None

    assert loaded == [CRONTAB]
    [message] = person.errors
    assert "missing" in message
    assert there.definitions() == []


def test_nothing_to_import_disables_the_import_button(qtbot: QtBot) -> None:
    dialog = ReportDialog(TransferReport(preview=True), title="t")
    qtbot.addWidget(dialog)
    assert dialog.buttons.standardButtons() == QDialogButtonBox.StandardButton.Close
    assert dialog.headline.text() == "0 tasks to add, 0 skipped"


def test_import_plans_again_when_pressed_so_a_task_added_meanwhile_is_not_doubled(
    desks: tuple[Desk, Desk], person: Person
) -> None:
    _, there = desks

    def paste(dialog: QDialog) -> int:
        assert isinstance(dialog, CrontabDialog)
        dialog.editor.setPlainText(CRONTAB)
        return ACCEPTED

    def someone_adds_the_same_task_first(dialog: QDialog) -> int:
        assert isinstance(dialog, ReportDialog)
        assert dialog.headline.text() == "1 task to add, 2 skipped"
        there.service.add_tasks([spec("Tidy downloads")])
        return press_import(dialog)

    person.answers = [paste, someone_adds_the_same_task_first, close]
    report = there.actions.import_crontab()

    assert report is not None and report.added == ()
    assert [item.where for item in report.skipped] == ["line 4", "line 5", "line 3"]
    assert [task.name for task in there.definitions()] == ["Tidy downloads"]
