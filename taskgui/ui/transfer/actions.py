"""File → Import…, Import Crontab…, Export…: the same import and export as the CLI.

Every import goes the same way as ``taskgui import``: read the whole input, check all
of it, show a preview (what will be added, replaced and skipped, and why), and only on
"Import" write, all new tasks in one ``add_tasks`` call. Afterwards a summary dialog
shows the same report as done. The rules themselves live in ``core`` (the file format,
the crontab, the plan), the dialogs in ``transfer_dialogs``; this module asks for
files, runs the dialogs and writes through the schedule.

Replace here means what ``--replace`` means: the existing tasks of that name are
deleted after the imported ones are added (two steps through the service, so if a
delete fails, both exist and the error says which ids to delete).

File pickers, message boxes and ``QDialog.exec`` are injected, so tests drive the
real dialogs without a modal loop.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QObject, Signal
from PySide6.QtGui import QAction
from PySide6.QtWidgets import QDialog, QFileDialog, QWidget

from taskgui.core.clock import Clock
from taskgui.core.errors import TaskguiError, TaskNotFoundError
from taskgui.core.status import RunRecord, TaskSnapshot
from taskgui.core.task import TaskId, TaskSpec
from taskgui.core.transfer.crontab import parse_crontab
from taskgui.core.transfer.export_file import (
    TransferFormatError,
    build_document,
    dump_document,
    parse_document,
)
from taskgui.core.transfer.plan import ImportPlan, ParsedImport, plan_import
from taskgui.core.transfer.report import TransferReport
from taskgui.system.accounts import crontab_source
from taskgui.system.files import write_private
from taskgui.system.local_zone import local_zone_name
from taskgui.ui.plain_text import inform, warn
from taskgui.ui.transfer.dialogs import (
    CrontabDialog,
    FilePicker,
    Message,
    ReportDialog,
    read_text,
)

RunDialog = Callable[[QDialog], int]


class TransferTarget(Protocol):
    """What import and export need of the schedule: ``SchedulerService`` has it.

    ``add_tasks`` must store all the tasks in one transaction (all or none).
    """

    def snapshot(self) -> list[TaskSnapshot]: ...

    def history(self, task_id: TaskId, limit: int = ...) -> list[RunRecord]: ...

    def add_tasks(self, specs: Sequence[TaskSpec]) -> list[TaskSpec]: ...

    def update_task(self, spec: TaskSpec) -> None: ...

    def delete(self, task_id: TaskId) -> None: ...


EXPORT_FILTER = "taskgui export (*.json);;All files (*)"
GUI_REPLACE_HINT = "tick “Replace tasks with the same name” to replace it"
ALL_RUNS = 2**31 - 1


def pick_open_file(parent: QWidget, caption: str, filters: str) -> str | None:
    path, _ = QFileDialog.getOpenFileName(parent, caption, "", filters)
    return path or None


def pick_save_file(parent: QWidget, caption: str, filters: str) -> str | None:
    path, _ = QFileDialog.getSaveFileName(parent, caption, "taskgui-export.json", filters)
    return path or None


def show_error(parent: QWidget, title: str, text: str) -> None:
    warn(parent, title, text)  # the text quotes the file: plain, never HTML


def show_info(parent: QWidget, title: str, text: str) -> None:
    inform(parent, title, text)


def exec_dialog(dialog: QDialog) -> int:
    return dialog.exec()


class TransferActions(QObject):
    """The File menu's Import…, Import Crontab…, Export… and Export with History….

    Signals:
        imported(object): the final TransferReport after an import wrote something.
        exported(str): the path of a file just written.
    """

    imported = Signal(object)
    exported = Signal(str)

    def __init__(
        self,
        parent: QWidget,
        service: TransferTarget,
        clock: Clock,
        *,
        open_file: FilePicker = pick_open_file,
        save_file: FilePicker = pick_save_file,
        error: Message = show_error,
        info: Message = show_info,
        run_dialog: RunDialog = exec_dialog,
        local_zone: Callable[[], str] = local_zone_name,
    ) -> None:
        super().__init__(parent)
        self._window = parent
        self._service = service
        self._clock = clock
        self._open_file = open_file
        self._save_file = save_file
        self._error = error
        self._info = info
        self._run_dialog = run_dialog
        self._local_zone = local_zone
        self.import_action = QAction("&Import…", self)
        self.import_action.setStatusTip("Import tasks from a taskgui export file")
        self.import_crontab_action = QAction("Import &Crontab…", self)
        self.import_crontab_action.setStatusTip("Turn crontab lines into cron tasks")
        self.export_action = QAction("&Export…", self)
        self.export_action.setStatusTip("Write every task definition to a JSON file")
        self.export_history_action = QAction("Export with &History…", self)
        self.export_history_action.setStatusTip("Export, with every task's recorded runs")
        self.import_action.triggered.connect(self._on_import_action_triggered)
        self.import_crontab_action.triggered.connect(self._on_import_crontab_action_triggered)
        self.export_action.triggered.connect(self._on_export_action_triggered)
        self.export_history_action.triggered.connect(self._on_export_history_action_triggered)

    def retarget(self, service: TransferTarget) -> None:
        """Import into and export from ``service`` from now on."""
        self._service = service

    def actions(self) -> list[QAction]:
        return [
            self.import_action,
            self.import_crontab_action,
            self.export_action,
            self.export_history_action,
        ]

    # ------------------------------------------------------------------ slots

    def _on_import_action_triggered(self) -> None:
        self._safely("Import", self.import_file)

    def _on_import_crontab_action_triggered(self) -> None:
        self._safely("Import Crontab", self.import_crontab)

    def _on_export_action_triggered(self) -> None:
        self._safely("Export", self.export)

    def _on_export_history_action_triggered(self) -> None:
        self._safely("Export", lambda: self.export(with_history=True))

    def _safely(self, title: str, action: Callable[[], object]) -> None:
        """No exception escapes a slot: each one becomes a message a person can read."""
        try:
            action()
        except TransferFormatError as error:
            self._error(self._window, title, "\n".join(error.problems))
        except TaskguiError as error:
            self._error(self._window, title, str(error))
        except OSError as error:
            where = f" ({error.filename})" if error.filename else ""
            self._error(self._window, title, f"{error.strerror or error}{where}")
        except Exception as error:
            self._error(self._window, title, f"internal error: {type(error).__name__}: {error}")

    # ------------------------------------------------------------- the work

    def import_file(self) -> TransferReport | None:
        """Ask for an export file, preview it, import it; None when nothing was written."""
        path = self._open_file(self._window, "Import Tasks", EXPORT_FILTER)
        if path is None:
            return None
        parsed = parse_document(read_text(path))
        return self._preview_and_import(lambda _now: parsed, f"Import {Path(path).name}")

    def import_crontab(self) -> TransferReport | None:
        """Ask for crontab text (pasted or loaded), preview it, import it."""
        dialog = CrontabDialog(self._open_file, self._error, self._window)
        if self._run_dialog(dialog) != QDialog.DialogCode.Accepted:
            return None
        text, zone = dialog.text(), self._local_zone()
        source = crontab_source(dialog.path())
        return self._preview_and_import(
            lambda now: parse_crontab(text, now=now, default_tz=zone, source=source),
            "Import Crontab",
        )

    def export(self, *, with_history: bool = False) -> str | None:
        """Ask where, write every definition (and runs, if asked); return the path."""
        path = self._save_file(self._window, "Export Tasks", EXPORT_FILTER)
        if path is None:
            return None
        target = Path(path) if Path(path).suffix else Path(path).with_suffix(".json")
        snapshots = self._service.snapshot()
        runs: dict[TaskId, list[RunRecord]] | None = None
        if with_history:
            runs = {item.id: self._service.history(item.id, ALL_RUNS) for item in snapshots}
        write_private(target, dump_document(build_document(snapshots, self._clock.now(), runs)))
        count = len(snapshots)
        self._info(
            self._window, "Export", f"Exported {count} task{'' if count == 1 else 's'} to {target}"
        )
        self.exported.emit(str(target))
        return str(target)

    def _preview_and_import(
        self, parse: Callable[[datetime], ParsedImport], title: str
    ) -> TransferReport | None:
        """Preview, and on Import plan once more and write that plan.

        Planning again at the moment of writing matters because a person may read the
        preview for minutes: a cron task's first run is its first match after *now*
        (not after the preview, or it would count as missed and run at once), and the
        names to skip or replace are those that exist now.
        """

        def replan(replace_existing: bool) -> ImportPlan:
            now = self._clock.now()
            return plan_import(
                parse(now),
                self._service.snapshot(),
                now,
                replace_existing=replace_existing,
                replace_hint=GUI_REPLACE_HINT,
            )

        preview = ReportDialog(title=title, replan=replan, parent=self._window)
        if self._run_dialog(preview) != QDialog.DialogCode.Accepted:
            return None
        plan = replan(preview.replace_box.isChecked())
        self._write(plan)
        report = plan.report.done()
        self.imported.emit(report)
        self._run_dialog(ReportDialog(report, title=title, parent=self._window))
        return report

    def _write(self, plan: ImportPlan) -> None:
        """Add every new task in one call (one transaction), then delete the replaced."""
        if plan.to_add:
            stored = self._service.add_tasks(list(plan.to_add))
            for spec in plan.linked(stored):  # "run after", by the new ids
                self._service.update_task(spec)
        failed: list[str] = []
        for task_id in plan.delete_ids:
            try:
                self._service.delete(task_id)
            except TaskNotFoundError:
                continue  # deleted meanwhile: what replace wanted anyway
            except TaskguiError as error:
                failed.append(f"task {task_id} ({error})")
        if failed:
            raise TaskguiError(
                f"the imported tasks were added, but these tasks they replace could not "
                f"be deleted: {'; '.join(failed)}; delete them by hand"
            )
