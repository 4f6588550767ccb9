"""Every shape through every path: the store, the export file, a request, the CLI's JSON.

One task of each kind (every schedule kind, retry policy and command form) and one run
go through each of the four places that write the task's JSON shape, and each place
must hand back exactly what went in, in the same objects (``core.shape``). Values
written by the taskgui from before the shape was written once must still load.
"""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from taskgui.cli import main as cli
from taskgui.cli.output import run_json as cli_run_json
from taskgui.control.recovery import recover
from taskgui.core.clock import FakeClock
from taskgui.core.engine.engine import Engine
from taskgui.core.errors import InvalidTaskError
from taskgui.core.events import RunDispatched
from taskgui.core.recurrence import Cron, Every, EveryMode
from taskgui.core.retry import Backoff
from taskgui.core.shape import values
from taskgui.core.shape.task import TaskDecoder, decode_run, run_json, task_json
from taskgui.core.states import RunOutcome
from taskgui.core.status import RunResult
from taskgui.core.task import Command
from taskgui.core.transfer.export_file import build_document, dump_document, parse_document
from taskgui.store import codec
from taskgui.store.requests import decode_spec, encode_spec
from taskgui.store.sqlite.repository import SqliteRepository
from tests.helpers.factories import T0
from tests.helpers.shapes import EVERY_SHAPE as SPECS

# Whole milliseconds for the run, which the CLI's JSON keeps; the other tasks' times
# have microseconds, which the definition in it keeps.
RAN_AT = T0 + timedelta(seconds=1)


def run_first_task(db: Path) -> None:
    """The first task runs once (and fails), recorded as a scheduler records it."""
    repository = SqliteRepository(db)
    engine = Engine()
    recover(repository, engine, RAN_AT)
    events = engine.due(RAN_AT, 1)
    repository.apply(events, RAN_AT)
    (ticket,) = [event.run for event in events if isinstance(event, RunDispatched)]
    finished = RAN_AT + timedelta(seconds=2)
    result = RunResult(exit_code=3, error="exit status 3", output="boom ü\n")
    repository.apply(
        engine.finished(ticket.run_id, RunOutcome.FAILED, finished),
        finished,
        {ticket.run_id: result},
    )
    repository.close()


def cli_json(db: Path, capsys: pytest.CaptureFixture[str], *args: str) -> Any:
    code = cli.main(["--db", str(db), *args, "--json"], clock=FakeClock(RAN_AT))
    captured = capsys.readouterr()
    assert code == 0, captured.err
    return json.loads(captured.out)


def test_every_shape_comes_back_unchanged_from_every_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    db = tmp_path / "t.sqlite3"
    repository = SqliteRepository(db)
    stored = repository.add_tasks(SPECS, T0)
    repository.close()
    run_first_task(db)

    # The store: a new connection reads back every definition and the run, and each
    # JSON column holds the shape's own object.
    repository = SqliteRepository(db)
    snapshots = repository.list_tasks()
    [run] = repository.runs(stored[0].id)
    columns = repository._query("SELECT command, recurrence, retry FROM tasks ORDER BY id")
    repository.close()
    assert [snapshot.spec for snapshot in snapshots] == stored
    for spec, (command, schedule, retry) in zip(stored, columns, strict=True):
        assert json.loads(command) == values.command_json(spec.command)
        assert json.loads(schedule) == values.schedule_json(spec.recurrence)
        assert json.loads(retry) == values.retry_json(spec.retry)
    assert (run.task_id, run.outcome, run.exit_code) == (stored[0].id, RunOutcome.FAILED, 3)
    assert (run.started_at, run.output, run.error) == (RAN_AT, "boom ü\n", "exit status 3")

    # The export file: each task is the shape (with its state), each run too.
    text = dump_document(build_document(snapshots, T0, {stored[0].id: [run]}))
    document = json.loads(text)
    for item, snapshot in zip(document["tasks"], snapshots, strict=True):
        assert item == task_json(snapshot.spec, snapshot.state)
        assert TaskDecoder().task(item) == (snapshot.spec, snapshot.state)
    [exported_run] = document["runs"][str(stored[0].id)]
    assert exported_run == run_json(run)
    assert decode_run(exported_run) == run
    assert [item.spec for item in parse_document(text).candidates] == [
        spec.with_id(0) for spec in stored
    ]

    # A request: the payload carries the shape, and the receiver reads the same spec.
    for spec in stored:
        payload = encode_spec(spec)
        assert json.loads(payload)["task"] == task_json(spec)
        assert decode_spec(payload) == spec

    # The CLI's JSON: the definition is the shape, exact; the older keys agree with it.
    listed = cli_json(db, capsys, "list")
    for item, snapshot in zip(listed, snapshots, strict=True):
        assert item["definition"] == task_json(snapshot.spec)
        assert TaskDecoder().task(item["definition"]) == (snapshot.spec, None)
        assert item["recurrence"]["kind"] == item["definition"]["schedule"]["kind"]
        assert item["retry"]["delay_seconds"] == snapshot.spec.retry.base_delay.total_seconds()
    assert listed[1]["recurrence"] == {
        "kind": "every",
        "interval_seconds": 300.0,
        "mode": "fixed_rate",
    }
    [history] = cli_json(db, capsys, "history", str(stored[0].id))
    assert history == cli_run_json(run)
    assert decode_run(history) == run  # its times are whole milliseconds here


# What the taskgui before core/shape wrote (c12d3a1): an export file with history, and
# a request carrying a definition as a row of the store's columns.
OLD_EXPORT = (
    '{"format": "taskgui-export", "version": 1, "exported_at": "2026-01-01T12:00:00+00:00'
    '", "tasks": [{"id": 3, "name": "backup", "state": "pending", "command": {"v": 1, "li'
    'ne": "backup.sh", "shell": true, "cwd": "/srv", "env": [["A", "1"]]}, "first_run_at"'
    ': "2026-01-01T12:00:00+00:00", "schedule": {"v": 1, "kind": "cron", "expr": "0 3 * *'
    ' *", "tz": "Europe/Berlin"}, "retry": {"v": 1, "backoff": "fixed", "max_attempts": 5'
    ', "base": 30.0, "max": 30.0, "factor": 2.0, "jitter": false}, "priority": 0, "timeou'
    't_seconds": null, "concurrency_key": null, "overlap": "skip", "misfire": "run_once",'
    ' "misfire_grace_seconds": 60.0, "paused": false}, {"id": 4, "name": "bash job", "sta'
    'te": "paused", "command": {"v": 2, "line": "job", "shell": true, "cwd": null, "env":'
    ' [], "shell_path": "/bin/bash"}, "first_run_at": "2026-01-01T12:00:00.000005+00:00",'
    ' "schedule": {"v": 1, "kind": "every", "seconds": 300.0, "mode": "fixed_delay"}, "re'
    'try": {"v": 1, "backoff": "exponential", "max_attempts": 3, "base": 10.0, "max": 360'
    '0.0, "factor": 2.0, "jitter": false}, "priority": 0, "timeout_seconds": 60.0, "concu'
    'rrency_key": "k", "overlap": "skip", "misfire": "run_once", "misfire_grace_seconds":'
    ' 60.0, "paused": true}], "runs": {"3": [{"id": 1, "attempt": 1, "kind": "occurrence"'
    ', "scheduled_at": "2026-01-01T12:00:00+00:00", "started_at": "2026-01-01T12:00:00+00'
    ':00", "finished_at": "2026-01-01T12:00:02+00:00", "outcome": "failed", "exit_code": '
    '3, "error": "exit status 3", "output": "boom\\n"}], "4": []}}'
)
OLD_REQUEST = (
    '{"v": 1, "row": [4, "bash job", "{\\"v\\":2,\\"line\\":\\"job\\",\\"shell\\":true,\\"cwd\\":nu'
    'll,\\"env\\":[],\\"shell_path\\":\\"/bin/bash\\"}", 0, 1767268800000005, "{\\"v\\":1,\\"kind\\'
    '":\\"every\\",\\"seconds\\":300.0,\\"mode\\":\\"fixed_delay\\"}", '
    '"{\\"v\\":1,\\"backoff\\":\\"ex'
    'ponential\\",\\"max_attempts\\":3,\\"base\\":10.0,\\"max\\":3600.0,\\"factor\\":2.0,\\"jitter\\'
    '":false}", 60.0, "k", "skip", "run_once", 60.0, 1]}'
)


def test_an_export_file_from_before_the_shape_still_imports() -> None:
    document = json.loads(OLD_EXPORT)
    backup, bash_job = (item.spec for item in parse_document(OLD_EXPORT).candidates)

    assert backup.command == Command(line="backup.sh", cwd="/srv", env=(("A", "1"),))
    assert backup.recurrence == Cron("0 3 * * *", "Europe/Berlin")
    assert backup.retry.backoff is Backoff.FIXED and backup.retry.max_attempts == 5
    assert bash_job.command.shell_path == "/bin/bash"
    assert bash_job.first_run_at == T0 + timedelta(microseconds=5)
    assert bash_job.recurrence == Every(timedelta(minutes=5), EveryMode.FIXED_DELAY)
    assert (bash_job.timeout, bash_job.concurrency_key, bash_job.paused) == (
        timedelta(minutes=1),
        "k",
        True,
    )
    [old_run] = document["runs"]["3"]  # no task_id, pid or missed yet: their defaults
    run = decode_run({**old_run, "task_id": 3})
    assert (run.exit_code, run.output, run.pid, run.missed) == (3, "boom\n", None, 0)
    # Written again, each task is the same object it was read from, less id and state.
    for item, spec in zip(document["tasks"], (backup, bash_job), strict=True):
        assert task_json(spec.with_id(item["id"]), None) == {
            key: value for key, value in item.items() if key != "state"
        }


def test_a_request_from_before_the_shape_is_still_read() -> None:
    spec = decode_spec(OLD_REQUEST)
    assert (spec.id, spec.name, spec.command.shell_path) == (4, "bash job", "/bin/bash")
    row = json.loads(OLD_REQUEST)["row"]
    assert (spec.id, *codec.spec_values(spec)) == (*row, None)  # notify: the default


@pytest.mark.parametrize(
    ("payload", "phrase"),
    [
        ('{"v": 2}', "expected a JSON object, got null"),
        ('{"v": 2, "task": []}', "expected a JSON object"),
        ('{"v": 2, "task": {"name": "x"}}', "field 'command': this field is required"),
        (
            '{"v": 2, "task": {"name": "x", "command": {"line": "true"}, '
            '"first_run_at": "2026-01-01T00:00:00+00:00", "retry": {"max_attempts": 0}}}',
            "field 'retry.max_attempts'",
        ),
        ('{"v": 3, "task": {}}', "unknown format"),
        ('{"v": 2, "task": ' + "[" * 100_000 + "]" * 100_000 + "}", "not readable JSON"),
    ],
)
def test_a_request_whose_definition_is_not_the_shape_is_refused_clearly(
    payload: str, phrase: str
) -> None:
    with pytest.raises(InvalidTaskError) as caught:
        decode_spec(payload)
    assert phrase in str(caught.value)
    assert "\n" not in str(caught.value)
