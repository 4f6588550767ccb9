"""Keeping "run after" across an export and an import: ids remapped.

An export names a task's upstreams by the ids they had in the database it came from;
the import gives every task a new id. So the plan links the tasks it adds by their
place in the plan (``PLACEHOLDER_BASE + index``), and once they are stored (their ids
known) ``resolve`` gives the definitions with the new ids, to save as an update.

A task whose upstream is not imported (not in the file, skipped, or itself dropped)
is skipped with the reason, and so is every task in a cycle: importing them would
make tasks that can never run, or that run for ever.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from taskgui.core.dependencies import PLACEHOLDER_BASE, Upstream, cycle_through
from taskgui.core.task import TaskId, TaskSpec
from taskgui.core.transfer.report import SkippedItem


def _drop_ambiguous_ids(
    kept: list[tuple[str, str, TaskSpec, TaskId | None]], skipped: list[SkippedItem]
) -> None:
    """A file id given to two tasks that another task runs after: which one it means
    cannot be told, so the later ones are skipped, saying so (a trial: the second was
    skipped as "'run after' makes a cycle: task 1 -> task 1"). An id no task names is
    only a number the import replaces anyway: both are kept."""
    named = {edge.task_id for _w, _t, spec, _f in kept for edge in spec.after}
    seen: set[TaskId] = set()
    for item in list(kept):
        where, text, _spec, file_id = item
        if file_id is None or file_id not in named:
            continue
        if file_id in seen:
            reason = f"id {file_id} is given to an earlier task of the file too, which is imported"
            skipped.append(SkippedItem(where, text, reason))
            kept.remove(item)
        seen.add(file_id)


def link(
    candidates: Sequence[tuple[str, str, TaskSpec, TaskId | None]],
) -> tuple[list[TaskSpec], list[SkippedItem]]:
    """``(where, text, spec, id in the file)`` in plan order -> the specs to add, their
    edges naming ``PLACEHOLDER_BASE + index``, and the ones skipped (with why)."""
    kept = list(candidates)
    skipped: list[SkippedItem] = []
    _drop_ambiguous_ids(kept, skipped)
    upstreams = {
        file_id: [edge.task_id for edge in spec.after]
        for _w, _t, spec, file_id in kept
        if file_id is not None and spec.after
    }
    for where, text, spec, file_id in list(kept):
        if spec.after and file_id is not None:
            cycle = cycle_through(file_id, upstreams[file_id], upstreams)
            if cycle is not None:
                path = " -> ".join(f"task {task_id}" for task_id in cycle)
                skipped.append(SkippedItem(where, text, f"'run after' makes a cycle: {path}"))
                kept.remove((where, text, spec, file_id))
    while True:
        present = {file_id for *_rest, file_id in kept if file_id is not None}
        missing = [item for item in kept if any(e.task_id not in present for e in item[2].after)]
        if not missing:
            break
        for item in missing:
            where, text, spec, _file_id = item
            absent = next(e.task_id for e in spec.after if e.task_id not in present)
            skipped.append(
                SkippedItem(
                    where, text, f"it runs after task {absent} of the file, which is not imported"
                )
            )
            kept.remove(item)
    index = {file_id: place for place, (*_r, file_id) in enumerate(kept) if file_id is not None}
    specs = [
        replace(
            spec,
            after=tuple(Upstream(PLACEHOLDER_BASE + index[e.task_id], e.after) for e in spec.after),
        )
        if spec.after
        else spec
        for _w, _t, spec, _f in kept
    ]
    return specs, skipped


def resolve(stored: Sequence[TaskSpec]) -> list[TaskSpec]:
    """The stored tasks that name placeholders, naming the new ids instead."""
    linked: list[TaskSpec] = []
    for spec in stored:
        if not any(edge.task_id >= PLACEHOLDER_BASE for edge in spec.after):
            continue
        edges = tuple(
            Upstream(stored[edge.task_id - PLACEHOLDER_BASE].id, edge.after)
            if edge.task_id >= PLACEHOLDER_BASE
            else edge
            for edge in spec.after
        )
        linked.append(replace(spec, after=edges))
    return linked
