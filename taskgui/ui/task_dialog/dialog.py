"""The dialog that creates, edits and duplicates a task.

It validates as a person types by building the ``TaskSpec`` (and its parts) from the
widgets, so every rule and every message is core's, the same the CLI gives. Each
message appears under the field it is about, and Create/Save stays disabled until
the whole task is valid: a person never meets an error after pressing it.

Opening a task and saving it unchanged gives back an equal ``TaskSpec``; the few values
the widgets do not show (the backoff factor, the misfire grace period, a first run's
sub-second part) are carried over from the task being edited.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from datetime import UTC, datetime

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QCloseEvent, QKeyEvent, QShowEvent
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QVBoxLayout,
    QWidget,
)

from taskgui.core.clock import Clock
from taskgui.core.conditions import SystemConditions
from taskgui.core.recurrence import Once, Recurrence
from taskgui.core.status import TaskSnapshot
from taskgui.core.task import DEFAULT_MISFIRE_GRACE, Command, TaskSpec
from taskgui.runtime.guard import never_raises
from taskgui.ui.plain_text import plain_tooltip, shown, window_title
from taskgui.ui.task_dialog import unsaved
from taskgui.ui.task_dialog.advanced_editor import AdvancedEditor
from taskgui.ui.task_dialog.fields import (
    MessageLabel,
    checked,
    named,
    one_place,
)
from taskgui.ui.task_dialog.folder_check import FolderCheck, Look, folder_warning
from taskgui.ui.task_dialog.mode import DialogMode
from taskgui.ui.task_dialog.retry_editor import RetryEditor
from taskgui.ui.task_dialog.run_after_editor import RunAfterEditor
from taskgui.ui.task_dialog.run_rules_editor import RunRulesEditor
from taskgui.ui.task_dialog.schedule_editor import ScheduleEditor
from taskgui.ui.task_dialog.screen_fit import FormScroll, fit_to_screen
from taskgui.ui.task_dialog.task_group import PathPicker, TaskGroup, pick_folder, pick_program

# Checking the form costs little, but with a command this long every check copies it
# out of the editor and through Command's rules: wait for the typing to pause instead.
DEBOUNCE_FROM = 10_000
VALIDATION_DELAY_MS = 150
MINIMUM_WIDTH = 820
_PROBE_COMMAND = Command(line="true")
_PROBE_TIME = datetime(2000, 1, 1, tzinfo=UTC)


class TaskDialog(QDialog):
    """Create, edit or duplicate a task; ``result_spec()`` is the task after accept.

    File pickers are injected (``pick_program``, ``pick_folder``) so tests never open a
    native dialog. The widgets are public attributes (and have object names) so tests
    and the main window can drive them.

    Validation runs at once after every change, except while the command is long
    (over ``DEBOUNCE_FROM`` characters): then it waits until the typing pauses for
    ``VALIDATION_DELAY_MS``, so holding a key down in a huge command checks it once.
    Whatever reads the outcome (``problems``, ``accept``) checks first if one waits.

    Signals:
        validated(): the form was checked (its messages and Create/Save are current).
    QDialog's ``accepted`` / ``finished`` say when it closed.
    """

    validated = Signal()

    def __init__(
        self,
        clock: Clock,
        parent: QWidget | None = None,
        *,
        spec: TaskSpec | None = None,
        mode: DialogMode = DialogMode.CREATE,
        pick_program: PathPicker = pick_program,
        pick_folder: PathPicker = pick_folder,
        system: SystemConditions | None = None,
        tasks: Sequence[TaskSnapshot] = (),
        look_at_folder: Look = folder_warning,
        ask_to_discard: unsaved.AskDiscard = unsaved.ask_discard,
    ) -> None:
        """``tasks``: the schedule's tasks, to pick what it runs after (and see cycles).
        ``look_at_folder``: how the working directory is judged (on a thread of its own).
        ``ask_to_discard``: asked when a person closes it with changes made."""
        super().__init__(parent)
        if spec is None and mode is not DialogMode.CREATE:
            raise ValueError(f"{mode.value} needs the task to start from")
        self._mode, self._source = mode, spec
        self._result: TaskSpec | None = None
        self._misfire_grace = spec.misfire_grace if spec else DEFAULT_MISFIRE_GRACE
        self.setObjectName("task_dialog")
        self.setWindowTitle(
            {
                DialogMode.CREATE: "New Task",
                DialogMode.EDIT: window_title(f"Edit Task — {shown(spec.name) if spec else ''}"),
                DialogMode.DUPLICATE: "Duplicate Task",
            }[mode]
        )
        self.schedule = ScheduleEditor(clock)
        self.retry = RetryEditor()
        self.advanced = AdvancedEditor()
        self.rules = RunRulesEditor(system)
        self.run_after = RunAfterEditor()
        own_id = spec.id if spec is not None and mode is DialogMode.EDIT else 0
        self.run_after.set_tasks(tasks, own_id)
        self._clock = clock
        task_group = TaskGroup(pick_program, pick_folder)
        # Its fields, by the names the dialog (and its tests) use.
        self.name, self.name_error = task_group.name, task_group.name_error
        self.command, self.command_error = task_group.command, task_group.command_error
        self.name_warning = task_group.name_warning
        self.command_warning = task_group.command_warning
        self.command_browse, self.priority = task_group.command_browse, task_group.priority
        self.cwd, self.cwd_browse = task_group.cwd, task_group.cwd_browse
        self.cwd_error, self.cwd_warning = task_group.cwd_error, task_group.cwd_warning
        self.task_group = task_group
        self.general_error = MessageLabel(lines=2)
        self.general_error.setObjectName("general_error")
        # The whole of the first message that did not fit under its field.
        self.cut_message = MessageLabel(lines=2)
        self.cut_message.setObjectName("cut_message")
        self.cut_message.setAccessibleName("Message in full")
        self.buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Ok | QDialogButtonBox.StandardButton.Cancel
        )
        ok_button = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        if ok_button is None:  # cannot happen: the box was made with an Ok button
            raise RuntimeError("QDialogButtonBox lost its Ok button")
        text = "Save" if mode is DialogMode.EDIT else "Create"
        self.ok_button = named(ok_button, "ok_button", text)
        self.ok_button.setText(text)
        self.ok_button.setDefault(True)
        self._lay_out(task_group)
        self._validation = QTimer(self)
        self._validation.setSingleShot(True)
        self._validation.setInterval(VALIDATION_DELAY_MS)
        self._folder_check = FolderCheck(clock.monotonic, self, look=look_at_folder)
        if spec is not None:
            self._load(spec)
        self._changes = self._watch_changes(ask_to_discard)
        self._connect()
        self._revalidate()
        self.name.setFocus(Qt.FocusReason.OtherFocusReason)

    # ------------------------------------------------------------ building

    def _lay_out(self, task_group: TaskGroup) -> None:
        left = QVBoxLayout()
        left.addWidget(task_group)
        left.addWidget(self.schedule)
        left.addStretch(1)
        right = QVBoxLayout()
        right.addWidget(self.retry)
        right.addWidget(self.advanced)
        right.addWidget(self.rules)
        right.addWidget(self.run_after)
        right.addStretch(1)
        form = QWidget()
        form.setObjectName("form")
        columns = QHBoxLayout(form)
        columns.setContentsMargins(0, 0, 0, 0)
        columns.setSpacing(16)
        columns.addLayout(left, 5)
        columns.addLayout(right, 4)
        # The form scrolls when the screen is short; the messages and the buttons stay
        # under it, always in view (see screen_fit).
        self.form_scroll = FormScroll(form)
        outer = QVBoxLayout(self)
        outer.setSpacing(10)
        outer.addWidget(self.form_scroll, 1)
        bottom = QHBoxLayout()
        bottom.setSpacing(16)
        bottom.addWidget(one_place(self.general_error, self.cut_message), 1)
        bottom.addWidget(self.buttons, 0, Qt.AlignmentFlag.AlignBottom)
        outer.addLayout(bottom)
        self.setMinimumWidth(MINIMUM_WIDTH)  # lowered on a narrower screen when shown

        # Left column, then right column: the order a person reads the form in.
        chain = [
            *task_group.focus_order(),
            *self.schedule.focus_order(),
            *self.retry.focus_order(),
            *self.advanced.focus_order(),
            *self.rules.focus_order(),
            *self.run_after.focus_order(),
            *self.buttons.buttons(),
        ]
        for first, second in itertools.pairwise(chain):
            QWidget.setTabOrder(first, second)

    def _connect(self) -> None:
        for line in (self.name, self.cwd):
            line.textChanged.connect(self._on_field_changed)
        self.command.textChanged.connect(self._on_field_changed)
        self.priority.valueChanged.connect(self._on_field_changed)
        self.schedule.changed.connect(self._on_field_changed)
        self.retry.changed.connect(self._on_field_changed)
        self.advanced.changed.connect(self._on_field_changed)
        self.rules.changed.connect(self._on_field_changed)
        self.run_after.changed.connect(self._on_field_changed)
        for section in (self.advanced, self.rules, self.run_after):
            section.toggle.toggled.connect(self._on_section_toggled)
        self.command.refused.connect(self._on_command_refused)
        self._validation.timeout.connect(self._on_validation_timeout)
        self._folder_check.answered.connect(self._on_folder_check_answered)
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.close_unless_kept)

    def _load(self, spec: TaskSpec) -> None:
        copy = self._mode is DialogMode.DUPLICATE
        self.task_group.load(spec, copy=copy)
        if self._mode is DialogMode.EDIT:
            self.schedule.warn_about_loaded_time = False
            self.schedule.past_warning = "this time has passed; it runs as soon as it is saved"
        self.schedule.set_schedule(spec.first_run_at, spec.recurrence, follow_if_past=copy)
        self.retry.set_policy(spec.retry)
        self.advanced.set_values(spec)
        self.rules.set_values(spec)
        self.run_after.set_values(spec)

    # ------------------------------------------------------------ reading

    def result_spec(self) -> TaskSpec | None:
        """The task as accepted (id kept when editing, else 0); None before accept."""
        return self._result

    def _build_spec(self) -> TaskSpec | None:
        """The task the widgets describe, every message shown; None when invalid."""
        probe = checked(
            self.name_error,
            lambda: TaskSpec(
                name=self.name.text(), command=_PROBE_COMMAND, first_run_at=_PROBE_TIME
            ),
        )
        line = self.command.toPlainText()
        command_ok = checked(self.command_error, lambda: Command(line=line))
        self.task_group.warn_of_hidden_text()
        cwd = checked(self.cwd_error, self.task_group.working_directory)
        self.cwd_warning.show_message(  # found off this thread (see folder_check)
            None if cwd is None or cwd[0] is None else self._folder_check.warning(cwd[0])
        )
        run_after = self.run_after.values()
        only_after = run_after is not None and run_after.only_after
        self.schedule.setEnabled(not only_after)  # none of its own: it waits for others
        schedule = self.schedule.schedule()
        retry = self.retry.policy()
        advanced = self.advanced.values()
        rules = self.rules.values()
        recurrence: Recurrence = Once()
        source = self._source
        # An "only after" task's own time means nothing; an edited one keeps its own.
        first_run_at = source.first_run_at if source and source.only_after else self._clock.now()
        if schedule is not None and not only_after:
            first_run_at, recurrence = schedule.first_run_at, schedule.recurrence
        if (
            probe is None
            or command_ok is None
            or cwd is None
            or (schedule is None and not only_after)
            or retry is None
            or advanced is None
            or rules is None
            or run_after is None
        ):
            self.general_error.show_message(None)
            return None
        editing = self._mode is DialogMode.EDIT and self._source is not None
        return checked(
            self.general_error,
            lambda: TaskSpec(
                id=self._source.id if editing and self._source else 0,
                name=probe.name,
                command=Command(
                    line=line,
                    use_shell=advanced.use_shell,
                    cwd=cwd[0],
                    env=advanced.env,
                    # The shell a crontab's SHELL= chose goes with the task it came with.
                    shell_path=self._source.command.shell_path
                    if self._source and advanced.use_shell
                    else None,
                ),
                first_run_at=first_run_at,
                recurrence=recurrence,
                priority=self.priority.value(),
                retry=retry,
                timeout=advanced.timeout,
                concurrency_key=advanced.concurrency_key,
                overlap=advanced.overlap,
                misfire=advanced.misfire,
                misfire_grace=self._misfire_grace,
                paused=advanced.paused,
                notify=advanced.notify,
                on_wake=advanced.on_wake,
                spread=rules.spread,
                conditions=rules.conditions,
                after=run_after.after,
                only_after=run_after.only_after,
            ),
        )

    def problems(self) -> list[str]:
        """The errors found now, top to bottom (empty: the task is valid), including
        those not shown yet under a field nobody has touched."""
        self._validate_if_waiting()
        return [
            label.message()
            for label in self.findChildren(MessageLabel)
            if not label.is_warning and label.message() and label is not self.cut_message
        ]

    # ------------------------------------------------------------ slots

    def _revalidate(self) -> None:
        self._validation.stop()
        spec = self._build_spec()
        self.ok_button.setEnabled(spec is not None)
        problems = self.problems()
        self.ok_button.setToolTip(plain_tooltip(f"First fix: {problems[0]}") if problems else "")
        self._show_cut_message()
        self.validated.emit()

    def _validate_if_waiting(self) -> None:
        if self._validation.isActive():
            self._revalidate()

    def _show_cut_message(self) -> None:
        """A message too long for its line is said in full at the bottom, by its field."""
        cut = next(
            (
                label
                for label in self.findChildren(MessageLabel)
                if label.is_cut() and label not in (self.general_error, self.cut_message)
            ),
            None,
        )
        if cut is None or self.general_error.shown_message():
            self.cut_message.show_message(None)
            return
        self.cut_message.is_warning = cut.is_warning
        self.cut_message.restyle()
        name = cut.field_name()
        self.cut_message.show_message(f"{name}: {cut.message()}" if name else cut.message())

    def showEvent(self, event: QShowEvent) -> None:  # noqa: N802
        self._changes.first_shown(self._form_state)
        if not event.spontaneous():
            # Before QDialog centres it, so that it is centred at the size it opens at.
            self.form_scroll.updateGeometry()  # sections opened before show count too
            fit_to_screen(self, MINIMUM_WIDTH)
        super().showEvent(event)
        self._show_cut_message()  # only now do the messages know their width

    @never_raises
    def _on_field_changed(self, *_args: object) -> None:
        if self.command.document().characterCount() > DEBOUNCE_FROM:
            self._validation.start()  # (re)started: checked once the typing pauses
        else:
            self._revalidate()

    @never_raises
    def _on_section_toggled(self, expanded: bool) -> None:
        # An opened section may have the room to show whole; a closed one leaves the
        # size alone (shrinking would move the buttons away from the pointer).
        if expanded and self.isVisible():
            self.form_scroll.updateGeometry()  # now, not when the posted relayout comes
            fit_to_screen(self, MINIMUM_WIDTH, grow_only=True)

    @never_raises
    def _on_validation_timeout(self) -> None:
        self._revalidate()

    @never_raises
    def _on_folder_check_answered(self) -> None:
        self._revalidate()

    @never_raises
    def _on_command_refused(self, message: str) -> None:
        self._validate_if_waiting()  # so that no late check hides the message
        self.command_error.show_message(message)

    def reveal_problems(self) -> None:
        """Show every problem, also under fields nobody has touched yet."""
        for label in self.findChildren(MessageLabel):
            label.reveal()

    def keyPressEvent(self, event: QKeyEvent) -> None:  # noqa: N802
        # Enter while the task is not valid yet: say everything that stands in the way.
        if event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter) and not self.ok_button.isEnabled():
            self.reveal_problems()
        if event.key() == Qt.Key.Key_Escape and event.modifiers() == Qt.KeyboardModifier.NoModifier:
            self.close_unless_kept()
            return
        super().keyPressEvent(event)

    def closeEvent(self, event: QCloseEvent) -> None:  # noqa: N802
        by_a_person = event.spontaneous() and self.isVisible()  # a program's close() is not
        if by_a_person and not self._changes.may_discard(self, self._form_state()):
            event.ignore()
            return
        super().closeEvent(event)

    @never_raises
    def close_unless_kept(self) -> None:
        """Cancel, Escape: close without the task, after asking if a person changed it."""
        if self._changes.may_discard(self, self._form_state()):
            self.reject()

    def _watch_changes(self, ask: unsaved.AskDiscard) -> unsaved.FormChanges:
        editing = self._source.name if self._source and self._mode is DialogMode.EDIT else None
        question = unsaved.discard_question(editing, copy=self._mode is DialogMode.DUPLICATE)
        return unsaved.FormChanges(ask, question)

    def _form_state(self) -> tuple[object, ...]:
        moving = [self.schedule.when] if self.schedule.follows_clock else []  # moves alone
        return unsaved.form_state(self.form_scroll, moving)

    @never_raises
    def accept(self) -> None:
        """Close with the task, unless it is not valid (Enter can beat a disabled button)."""
        self._validation.stop()
        spec = self._build_spec()
        if spec is None:
            self.reveal_problems()
            self._revalidate()
            return
        self._result = spec
        super().accept()
