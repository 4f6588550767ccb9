"""What an import did (or would do): added, replaced, skipped, and why.

One value for both front ends: the CLI prints ``render()`` (or ``to_json()``), the GUI
shows the same lists in its summary dialog. A person must be able to see every line
or task that did *not* become a task, with the reason, so nothing is ever dropped
silently; that is why skipped items carry the original text and a reason, not a count.

An import file is someone else's commands, run as you. So the report shows what
decides what runs besides the command line: each task's environment (with the
variables that change which programs, libraries or startup files run flagged, see
``env_risk``), its working folder, and whether it runs the moment it is imported
because its start has passed; ``cautions()`` says it in words, once for both front
ends. ``render()`` is for a terminal: every text from the input goes through
``terminal_text.visible``, so an escape sequence in a name is shown, not obeyed.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from taskgui.core.task import TaskId
from taskgui.core.terminal_text import visible
from taskgui.core.transfer.env_risk import risky_variables

RUNS_AS_YOU = (
    "Importing runs these commands as you, in their folders and with their environment: "
    "import only a file you trust."
)
RUNS_AT_ONCE = "at once (its start has passed)"


@dataclass(frozen=True, slots=True)
class AddedTask:
    """A task the import creates, with what decides what it runs and when it first does.

    ``env`` holds the variables it sets, as (name, value) pairs; ``cwd`` its working
    folder (None: the home folder); ``runs_at_once`` is true when it is due the moment
    it is added, because its first run time has passed.
    """

    name: str
    schedule: str
    command: str
    cwd: str | None = None
    env: tuple[tuple[str, str], ...] = ()
    runs_at_once: bool = False

    @property
    def risky_env(self) -> tuple[str, ...]:
        """The names among ``env`` that can change which code runs."""
        return risky_variables(name for name, _value in self.env)


@dataclass(frozen=True, slots=True)
class SkippedItem:
    """Something in the input that did not become a task.

    ``where`` locates it in the input ("line 7" of a crontab, "task 3" of an export
    file, counted from 1); ``text`` is the line itself or the task's name.
    """

    where: str
    text: str
    reason: str


@dataclass(frozen=True, slots=True)
class ReplacedTask:
    """An existing task that an import with replace deletes (an imported one has its name)."""

    task_id: TaskId
    name: str


@dataclass(frozen=True, slots=True, kw_only=True)
class TransferReport:
    """The outcome of an import; ``preview`` while nothing has been written yet."""

    added: tuple[AddedTask, ...] = ()
    replaced: tuple[ReplacedTask, ...] = ()
    skipped: tuple[SkippedItem, ...] = ()
    notes: tuple[str, ...] = ()
    preview: bool = False

    def done(self) -> TransferReport:
        """The same report, worded as something that happened."""
        return replace(self, preview=False)

    def summary(self) -> str:
        """One line of counts, e.g. '3 tasks added, 1 replaced, 2 skipped'."""
        verb = "to add" if self.preview else "added"
        parts = [f"{_count(len(self.added), 'task')} {verb}"]
        if self.replaced:
            parts.append(f"{len(self.replaced)} {'to replace' if self.preview else 'replaced'}")
        parts.append(f"{len(self.skipped)} skipped")
        return ", ".join(parts)

    def cautions(self) -> tuple[str, ...]:
        """What a person must know before these tasks run as them (empty: nothing).

        Names are quoted raw here; a terminal shows them through ``render()``.
        """
        if not self.added:
            return ()
        lines = [RUNS_AS_YOU] if self.preview else []
        at_once = [task.name for task in self.added if task.runs_at_once]
        if at_once:
            verb = "run" if len(at_once) != 1 else "runs"
            lines.append(
                f"{_count(len(at_once), 'task')} {verb} as soon as "
                f"{'it is' if len(at_once) == 1 else 'they are'} imported, because "
                f"{'its' if len(at_once) == 1 else 'their'} start has passed: "
                + ", ".join(f"“{name}”" for name in at_once)
            )
        risky = [task for task in self.added if task.risky_env]
        if risky:
            lines.append(
                f"{_count(len(risky), 'task')} {'sets' if len(risky) == 1 else 'set'} "
                "variables that change which programs, libraries or startup files run: "
                + "; ".join(f"“{task.name}” sets {', '.join(task.risky_env)}" for task in risky)
            )
        return tuple(lines)

    def render(self) -> str:
        """The whole report as text for a terminal or a dialog (no trailing newline)."""
        lines: list[str] = []
        if self.added:
            verb = "Would add" if self.preview else "Added"
            lines.append(f"{verb} {_count(len(self.added), 'task')}:")
            for task in self.added:
                lines.append(f"  + {task.name}: {task.schedule}")
                lines.append(f"      $ {_one_line(task.command)}")
                if task.cwd is not None:
                    lines.append(f"      folder: {task.cwd}")
                if task.env:
                    lines.append(f"      env: {_env_text(task)}")
                if task.runs_at_once:
                    lines.append(f"      starts: {RUNS_AT_ONCE}")
        else:
            lines.append("Would add no tasks." if self.preview else "Added no tasks.")
        if self.replaced:
            verb = "Would delete" if self.preview else "Deleted"
            lines.append(
                f"{verb} {_count(len(self.replaced), 'existing task')} "
                "replaced by imported ones of the same name:"
            )
            lines.extend(f"  - task {task.task_id}: {task.name}" for task in self.replaced)
        if self.skipped:
            lines.append(f"Skipped {len(self.skipped)}:")
            for item in self.skipped:
                lines.append(f"  ! {item.where}: {_one_line(item.text)}")
                lines.append(f"      {item.reason}")
        if self.notes:
            lines.append("Notes:")
            lines.extend(f"  * {note}" for note in self.notes)
        cautions = self.cautions()
        if cautions:
            lines.append("Caution:")
            lines.extend(f"  ! {caution}" for caution in cautions)
        # Line by line: a newline inside a name is shown as \n, not obeyed.
        return "\n".join(visible(line) for line in lines)

    def to_json(self) -> dict[str, Any]:
        """Plain JSON values, for ``--json`` (field names are part of the CLI contract)."""
        return {
            "preview": self.preview,
            "added": [
                {
                    "name": task.name,
                    "schedule": task.schedule,
                    "command": task.command,
                    "cwd": task.cwd,
                    "env": dict(task.env),
                    "risky_env": list(task.risky_env),
                    "runs_at_once": task.runs_at_once,
                }
                for task in self.added
            ],
            "replaced": [{"id": task.task_id, "name": task.name} for task in self.replaced],
            "skipped": [
                {"where": item.where, "text": item.text, "reason": item.reason}
                for item in self.skipped
            ],
            "notes": list(self.notes),
            "cautions": list(self.cautions()),
        }


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}" if number == 1 else f"{number} {noun}s"


def _env_text(task: AddedTask) -> str:
    """``A=1, LD_PRELOAD=/x.so (!)``: every variable, the risky ones marked."""
    risky = set(task.risky_env)
    return ", ".join(
        f"{name}={value}" + (" (!)" if name in risky else "") for name, value in task.env
    )


def _one_line(text: str, width: int = 120) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"
