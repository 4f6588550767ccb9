"""Deciding what an import adds, replaces and skips, before anything is written.

Both importers (an export file, a crontab) first turn their input into candidates;
this module then compares the candidates with the tasks that already exist. Keeping
the decision pure means the CLI (reading the repository) and the GUI (reading the
scheduler service) skip and replace exactly the same tasks, and a dry run shows
exactly what the real run would do.

Replace means: every existing task whose name equals an imported task's name is
deleted (with its run history), and the imported task is added under a new id.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from taskgui.core.states import MisfirePolicy
from taskgui.core.status import TaskSnapshot
from taskgui.core.task import TaskId, TaskSpec
from taskgui.core.transfer.links import link, resolve
from taskgui.core.transfer.report import AddedTask, ReplacedTask, SkippedItem, TransferReport

CLI_REPLACE_HINT = "use --replace to replace it"


@dataclass(frozen=True, slots=True)
class Candidate:
    """A valid task read from the input; ``where`` and ``text`` locate it for the report."""

    where: str
    text: str
    spec: TaskSpec
    # Its id in the file it came from: what other tasks' "run after" names it by.
    file_id: TaskId | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ParsedImport:
    """An input read and validated: the tasks it holds, what it could not convert, notes."""

    candidates: tuple[Candidate, ...] = ()
    skipped: tuple[SkippedItem, ...] = ()
    notes: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class ImportPlan:
    """What to write: add ``to_add`` (one transaction), delete ``to_delete``."""

    to_add: tuple[TaskSpec, ...]
    to_delete: tuple[ReplacedTask, ...]
    report: TransferReport

    @property
    def delete_ids(self) -> tuple[TaskId, ...]:
        return tuple(task.task_id for task in self.to_delete)

    def linked(self, stored: Sequence[TaskSpec]) -> list[TaskSpec]:
        """Once ``to_add`` is stored (``stored``, in its order): the tasks that run after
        others, naming their new ids, to save as updates (see ``transfer.links``)."""
        return resolve(stored)

    @property
    def changes_anything(self) -> bool:
        return bool(self.to_add or self.to_delete)


def plan_import(
    parsed: ParsedImport,
    existing: Iterable[TaskSnapshot],
    now: datetime,
    *,
    replace_existing: bool = False,
    replace_hint: str = CLI_REPLACE_HINT,
) -> ImportPlan:
    """Match candidates against existing tasks by name; the report is a preview.

    Names are compared exactly (after the trimming every TaskSpec does). Without
    ``replace_existing`` a candidate whose name exists is skipped; with it, every
    existing task of that name is listed for deletion. Candidates never clash with
    each other here: an export may hold two tasks of one name, and the crontab
    importer already numbers duplicate names.
    """
    by_name: dict[str, list[TaskSnapshot]] = {}
    for snapshot in existing:
        by_name.setdefault(snapshot.spec.name, []).append(snapshot)
    chosen: list[Candidate] = []
    skipped = list(parsed.skipped)
    to_delete: dict[TaskId, ReplacedTask] = {}
    for candidate in parsed.candidates:
        name = candidate.spec.name
        clashes = by_name.get(name, [])
        if clashes and not replace_existing:
            ids = ", ".join(str(snapshot.id) for snapshot in clashes)
            noun = "task" if len(clashes) == 1 else "tasks"
            skipped.append(
                SkippedItem(
                    candidate.where,
                    candidate.text,
                    f"a task named {name!r} already exists ({noun} {ids}); {replace_hint}",
                )
            )
            continue
        chosen.append(candidate)
    to_add = [candidate.spec for candidate in chosen]
    if any(spec.after for spec in to_add):
        to_add, unlinked = link([(c.where, c.text, c.spec, c.file_id) for c in chosen])
        skipped += unlinked
        dropped = {(item.where, item.text) for item in unlinked}
        chosen = [c for c in chosen if (c.where, c.text) not in dropped]
    for candidate in chosen:
        for snapshot in by_name.get(candidate.spec.name, []):
            to_delete.setdefault(snapshot.id, ReplacedTask(snapshot.id, candidate.spec.name))
    notes = list(parsed.notes)
    late = [spec for spec in to_add if _catches_up_at_once(spec, now)]
    if late:
        notes.append(
            f"{len(late)} imported task(s) started in the past and will run once as soon as "
            "the schedule runs (their misfire policy is run_once or run_all); set the "
            "misfire policy to skip to go straight to the next run instead"
        )
    report = TransferReport(
        added=tuple(_added(spec, now) for spec in to_add),
        replaced=tuple(sorted(to_delete.values(), key=lambda task: task.task_id)),
        skipped=tuple(skipped),
        notes=tuple(notes),
        preview=True,
    )
    return ImportPlan(to_add=tuple(to_add), to_delete=report.replaced, report=report)


def _added(spec: TaskSpec, now: datetime) -> AddedTask:
    command = spec.command
    return AddedTask(
        spec.name,
        spec.describe_schedule(),
        command.line,
        cwd=command.cwd,
        env=command.env,
        runs_at_once=runs_at_once(spec, now),
    )


def runs_at_once(spec: TaskSpec, now: datetime) -> bool:
    """True when ``spec``, added at ``now``, is due at once: its first run has passed.

    Within the misfire grace that first run simply starts late; beyond it the misfire
    policy decides, and only ``skip`` goes on to a later run (or, for a one-off, to
    "missed") instead. A paused task runs nothing until it is resumed.
    """
    if spec.paused:
        return False
    first = spec.recurrence.first_at_or_after(spec.first_run_at)
    if first > now:
        return False
    return now - first <= spec.misfire_grace or spec.misfire is not MisfirePolicy.SKIP


def _catches_up_at_once(spec: TaskSpec, now: datetime) -> bool:
    """True when adding ``spec`` now makes it due at once by its misfire policy.

    A new task's first slot is its first run time; if that lies further back than the
    grace period, the engine treats it like a run missed during downtime.
    """
    if spec.paused or spec.misfire is MisfirePolicy.SKIP:
        return False
    first = spec.recurrence.first_at_or_after(spec.first_run_at)
    return first < now - spec.misfire_grace and spec.recurrence.is_recurring
