"""The task dialog's "Task" section: name, command (with Browse…), working directory
(with Browse…) and priority, each with the line under it for its message.

The name and command fields hold the text exactly as it is stored and run, so a
right-to-left override in it is active there (``evil`` RLO ``exe.txt`` reads
"eviltxt.exe") and a zero-width space is not seen at all; the list shows both as
escapes (``plain_text.shown``). So while a field holds such characters a warning under
it says so, naming them as the list writes them (``hidden_text_warning``).
"""

from __future__ import annotations

import os
import shlex
from collections.abc import Callable

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QFileDialog,
    QGroupBox,
    QHBoxLayout,
    QLineEdit,
    QPushButton,
    QSpinBox,
    QWidget,
)

from taskgui.core.errors import InvalidTaskError
from taskgui.core.task import MAX_COMMAND_LENGTH, TaskSpec
from taskgui.core.terminal_text import direction_visible
from taskgui.runtime.guard import never_raises
from taskgui.ui.plain_text import shown, shown_lines
from taskgui.ui.task_dialog.advanced_editor import text_box
from taskgui.ui.task_dialog.fields import (
    MessageLabel,
    add_row,
    field_cell,
    named,
    new_form,
    one_place,
)

# (parent, folder to start in) -> the chosen path, or "" when the person cancelled.
PathPicker = Callable[[QWidget, str], str]

PRIORITY_RANGE = (-1000, 1000)
MAX_ESCAPES_NAMED = 4


def hidden_text_warning(what: str, text: str, *, lines: bool = False) -> str | None:
    """What to say under the ``what`` field ("name", "command") while ``text`` holds
    characters the field does not show as what they are; None when it holds none.

    ``lines``: a several-line editor, where tabs and line breaks are seen as such.
    """
    show = shown_lines if lines else shown
    seen = show(text)
    if seen == text:  # the usual text, checked at the speed of one regex
        return None
    # A joiner or mark kept where it does its work (Persian, emoji, Hebrew) is drawn
    # as itself there: only what ``seen`` writes as an escape is named.
    drawn = set(seen)  # once: a command may be 100,000 characters, checked as typed
    hidden = [char for char in dict.fromkeys(text) if char not in drawn and show(char) != char]
    escapes = list(dict.fromkeys(show(char) for char in hidden))
    named = ", ".join(escapes[:MAX_ESCAPES_NAMED]) + (
        ", …" if len(escapes) > MAX_ESCAPES_NAMED else ""
    )
    # Direction controls alone (an override, an isolate) reorder what is seen here.
    direction = all(direction_visible(char) != char for char in hidden)
    kind = "invisible direction characters" if direction else "invisible or control characters"
    return f"this {what} holds {kind} (shown in the list as {named})"


def pick_program(parent: QWidget, start: str) -> str:
    """The platform's file dialog, asking for a program or script to run."""
    path, _filter = QFileDialog.getOpenFileName(parent, "Choose a Program or Script", start)
    return path


def pick_folder(parent: QWidget, start: str) -> str:
    """The platform's folder dialog, asking for the working directory."""
    return QFileDialog.getExistingDirectory(parent, "Choose the Working Directory", start)


class TaskGroup(QGroupBox):
    """Name, command, working directory and priority; the dialog reads the widgets.

    File pickers are injected (``pick_program``, ``pick_folder``) so tests never open a
    native dialog.
    """

    def __init__(
        self,
        pick_program: PathPicker = pick_program,
        pick_folder: PathPicker = pick_folder,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__("Task", parent)
        self._pick_program = pick_program
        self._pick_folder = pick_folder
        self.name = named(QLineEdit(), "name", "Name")
        self.name.setPlaceholderText("e.g. Nightly backup")
        self.name_error = MessageLabel(field=self.name)
        self.name_warning = MessageLabel(warning=True, field=self.name)
        self.command = text_box(
            "command",
            "Command",
            3,
            "e.g. rsync -a ~/docs /mnt/backup",
            max_length=MAX_COMMAND_LENGTH,
        )
        self.command_error = MessageLabel(field=self.command)
        self.command_warning = MessageLabel(warning=True, field=self.command)
        self.command_browse = named(
            QPushButton("&Browse…"),
            "command_browse",
            "Browse for a program",
            "Insert the path of a program or script",
        )
        self.cwd = named(QLineEdit(), "cwd", "Working directory")
        self.cwd.setPlaceholderText("default: your home folder")
        self.cwd.setClearButtonEnabled(True)
        self.cwd_error = MessageLabel(field=self.cwd)
        self.cwd_warning = MessageLabel(warning=True, field=self.cwd)
        self.cwd_browse = named(
            QPushButton("Br&owse…"),
            "cwd_browse",
            "Browse for the working directory",
            "Choose the folder the command runs in",
        )
        for button in (self.command_browse, self.cwd_browse):
            button.setAutoDefault(False)  # Enter means Create wherever the focus is
        self.priority = named(
            QSpinBox(),
            "priority",
            "Priority",
            "higher runs first, when several tasks are due at once",
        )
        self.priority.setRange(*PRIORITY_RANGE)

        form = new_form(self)
        command_row = QHBoxLayout()
        command_row.addWidget(self.command, 1)
        command_row.addWidget(self.command_browse, 0, Qt.AlignmentFlag.AlignTop)
        cwd_row = QHBoxLayout()
        cwd_row.addWidget(self.cwd, 1)
        cwd_row.addWidget(self.cwd_browse)
        add_row(
            form,
            "&Name",
            self.name,
            field_cell(self.name, one_place(self.name_error, self.name_warning)),
        )
        add_row(
            form,
            "Co&mmand",
            self.command,
            field_cell(command_row, one_place(self.command_error, self.command_warning)),
        )
        add_row(
            form,
            "&Working directory",
            self.cwd,
            field_cell(cwd_row, one_place(self.cwd_error, self.cwd_warning)),
        )
        add_row(form, "&Priority", self.priority)

        self.command_browse.clicked.connect(self._on_command_browse_clicked)
        self.cwd_browse.clicked.connect(self._on_cwd_browse_clicked)

    def focus_order(self) -> list[QWidget]:
        return [
            self.name,
            self.command,
            self.command_browse,
            self.cwd,
            self.cwd_browse,
            self.priority,
        ]

    def load(self, spec: TaskSpec, *, copy: bool) -> None:
        self.name.setText(spec.name + " (copy)" if copy else spec.name)
        self.command.setPlainText(spec.command.line)
        self.cwd.setText(spec.command.cwd or "")
        low, high = PRIORITY_RANGE  # widened for a task given a larger one elsewhere
        self.priority.setRange(min(low, spec.priority), max(high, spec.priority))
        self.priority.setValue(spec.priority)

    def warn_of_hidden_text(self) -> None:
        """Say under the name and the command whether they hold hidden characters; an
        error there goes first (the two share the line under the field)."""
        for what, error, warning, text, lines in (
            ("name", self.name_error, self.name_warning, self.name.text(), False),
            ("command", self.command_error, self.command_warning, self.command.toPlainText(), True),
        ):
            said = None if error.message() else hidden_text_warning(what, text, lines=lines)
            warning.show_message(said)

    def working_directory(self) -> tuple[str | None]:
        """The folder typed, ``~`` expanded; a 1-tuple because None means "default"."""
        text = self.cwd.text().strip()
        if not text:
            return (None,)
        path = os.path.expanduser(text)
        if not os.path.isabs(path):
            example = os.path.join(os.path.expanduser("~"), "project")
            raise InvalidTaskError(f"the working directory must be a full path, like {example}")
        return (path,)

    @never_raises
    def _on_command_browse_clicked(self, _checked: bool = False) -> None:
        path = self._pick_program(self, os.path.expanduser("~"))
        if path:
            self.command.textCursor().insertText(shlex.quote(path))
            self.command.setFocus(Qt.FocusReason.OtherFocusReason)

    @never_raises
    def _on_cwd_browse_clicked(self, _checked: bool = False) -> None:
        start = os.path.expanduser(self.cwd.text().strip() or "~")
        path = self._pick_folder(self, start)
        if path:
            self.cwd.setText(path)
            self.cwd.setFocus(Qt.FocusReason.OtherFocusReason)
