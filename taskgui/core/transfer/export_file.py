"""The export file: task definitions as versioned JSON, and reading it back.

A document looks like::

    {"format": "taskgui-export", "version": 1, "exported_at": "2026-...+00:00",
     "tasks": [{"id": 7, "name": ..., "state": "pending", "command": {"v": 1, ...},
                "first_run_at": ..., "schedule": {"v": 1, ...}, "retry": {"v": 1, ...},
                "priority": 0, "timeout_seconds": null, "concurrency_key": null,
                "overlap": "skip", "misfire": "run_once", "misfire_grace_seconds": 60.0,
                "paused": false, "notify": "after:3"}],  # notify: only when set
     "runs": {"7": [...]}}            # only when exported with history

Each task and run is the one shape of ``taskgui.core.shape`` (the store keeps the same
``command``, ``schedule`` and ``retry`` objects as text in its columns; here they are
nested objects, so the file stays readable). Times are ISO 8601 with an offset,
durations are seconds.

Reading is strict and says where: a JSON syntax error names its line and column, and
an invalid task names its position and field ("task 3 ('backup'): field
'retry.max_attempts': ..."). Every task is checked before any is returned, so an
import can be all or nothing. The decoding of fields lives in ``shape``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from taskgui.core.errors import InvalidTaskError
from taskgui.core.shape import task as task_shape
from taskgui.core.shape import values
from taskgui.core.shape.fields import FieldError
from taskgui.core.shape.task import TaskDecoder
from taskgui.core.status import RunRecord, TaskSnapshot
from taskgui.core.text_rules import quoted
from taskgui.core.transfer.plan import Candidate, ParsedImport
from taskgui.core.transfer.report import SkippedItem

FORMAT_NAME = "taskgui-export"
FORMAT_VERSION = 1
MAX_LISTED_PROBLEMS = 10


class TransferFormatError(InvalidTaskError):
    """The file cannot be imported as a whole; ``problems`` lists each reason.

    An InvalidTaskError, so the CLI exits with status 2 (bad input) and the GUI shows
    the message as it shows any invalid task.
    """

    def __init__(self, message: str, problems: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.problems = tuple(problems) or (message,)


# ------------------------------------------------------------------------ writing

# The shape's writers, under the names this module has always offered.
command_json = values.command_json
recurrence_json = values.schedule_json
retry_json = values.retry_json
iso = task_shape.iso


def task_json(snapshot: TaskSnapshot) -> dict[str, Any]:
    """One task's definition and the state it was exported in (``shape.task``)."""
    return task_shape.task_json(snapshot.spec, snapshot.state)


run_json = task_shape.run_json


def build_document(
    snapshots: Iterable[TaskSnapshot],
    exported_at: datetime,
    runs: Mapping[int, Sequence[RunRecord]] | None = None,
) -> dict[str, Any]:
    """The export document; ``runs`` (task id -> runs, newest first) adds history."""
    ordered = sorted(snapshots, key=lambda snapshot: snapshot.id)
    document: dict[str, Any] = {
        "format": FORMAT_NAME,
        "version": FORMAT_VERSION,
        "exported_at": iso(exported_at),
        "tasks": [task_json(snapshot) for snapshot in ordered],
    }
    if runs is not None:
        document["runs"] = {
            str(snapshot.id): [run_json(run) for run in runs.get(snapshot.id, ())]
            for snapshot in ordered
        }
    return document


def dump_document(document: Mapping[str, Any]) -> str:
    """Indented text ending in a newline, meant to be read and diffed.

    Non-ASCII characters are written as themselves, unless the document holds one that
    UTF-8 cannot encode (a lone surrogate from a file name that is not UTF-8): then
    everything is escaped, which is still exact JSON.
    """
    text = json.dumps(document, indent=2, ensure_ascii=False) + "\n"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return json.dumps(document, indent=2) + "\n"
    return text


# ------------------------------------------------------------------------ reading


def parse_document(text: str) -> ParsedImport:
    """Read an export; raise TransferFormatError naming the line or field at fault.

    Tasks that were finished when exported (succeeded, exhausted, cancelled, missed)
    are skipped with a reason: adding them again would schedule them again, and a
    finished one-off task would run at once. Run history in the file is not imported.
    """
    data = _load(text)
    candidates: list[Candidate] = []
    skipped: list[SkippedItem] = []
    problems: list[str] = []
    decoder = TaskDecoder()
    for index, item in enumerate(data["tasks"], start=1):
        label = _label(index, item)
        try:
            spec, state = decoder.task(item, keep_id=False)
        except FieldError as error:
            where = f"field {error.path!r}: " if error.path else ""
            problems.append(f"{label}: {where}{error.message}")
            continue
        if state is not None and state.is_terminal:
            skipped.append(
                SkippedItem(
                    f"task {index}",
                    spec.name,
                    f"it had finished ({state.value}) when it was exported; importing it "
                    "would schedule it again",
                )
            )
            continue
        file_id = item.get("id") if isinstance(item, dict) else None
        candidates.append(
            Candidate(f"task {index}", spec.name, spec, file_id if type(file_id) is int else None)
        )
    if problems:
        raise _invalid_tasks(problems)
    notes = []
    run_count = _run_count(data.get("runs"))
    if run_count:
        notes.append(
            f"the file's run history ({run_count} runs) is not imported; it stays in the file"
        )
    return ParsedImport(candidates=tuple(candidates), skipped=tuple(skipped), notes=tuple(notes))


def _load(text: str) -> dict[str, Any]:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        hint = ""
        if not text.lstrip().startswith(("{", "[")):
            hint = "; to import a crontab, use 'taskgui import --crontab FILE'"
        raise TransferFormatError(
            f"the file is not valid JSON: line {error.lineno}, column {error.colno}: "
            f"{error.msg}{hint}"
        ) from None
    except RecursionError:
        raise TransferFormatError(
            "the file nests its JSON too deeply to read; a taskgui export nests a few levels"
        ) from None
    except ValueError:  # Python reads no integer of more than 4,300 digits
        raise TransferFormatError(
            "the file holds a number too long to read (more than 4,300 digits)"
        ) from None
    if not isinstance(data, dict) or data.get("format") != FORMAT_NAME:
        raise TransferFormatError(
            f'this is not a taskgui export: expected a JSON object with "format": '
            f"\"{FORMAT_NAME}\" (write one with 'taskgui export')"
        )
    version = data.get("version")
    if type(version) is not int or version < 1:
        raise TransferFormatError(
            f"field 'version': expected a whole number from 1, got {json.dumps(version)}"
        )
    if version > FORMAT_VERSION:
        raise TransferFormatError(
            f"this file was written by a newer taskgui (version {version}); this taskgui "
            f"reads version {FORMAT_VERSION} and older; upgrade taskgui to import it"
        )
    if not isinstance(data.get("tasks"), list):
        raise TransferFormatError("field 'tasks': expected a list of tasks")
    return data


def _label(index: int, item: object) -> str:
    name = item.get("name") if isinstance(item, dict) else None
    return f"task {index} ({quoted(name)})" if isinstance(name, str) else f"task {index}"


def _invalid_tasks(problems: list[str]) -> TransferFormatError:
    listed = problems[:MAX_LISTED_PROBLEMS]
    more = len(problems) - len(listed)
    tail = f"; and {more} more" if more else ""
    noun = "task is" if len(problems) == 1 else "tasks are"
    return TransferFormatError(
        f"nothing was imported: {len(problems)} {noun} not valid: {'; '.join(listed)}{tail}",
        problems,
    )


def _run_count(runs: object) -> int:
    if not isinstance(runs, dict):
        return 0
    return sum(len(value) for value in runs.values() if isinstance(value, list))
