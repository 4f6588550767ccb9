"""``show N`` reads task N and the few tasks it names, never the whole schedule (an
outsider's trial: 4.9 s at 100,000 tasks, every one of them decoded to print one).

Counted, not timed: the rows decoded, and a repository that fails any read of every
task (``list_tasks``, ``load``, every task's wait reason).
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from taskgui.cli import main as cli
from taskgui.core.dependencies import After, Upstream
from taskgui.core.events import TaskChanged
from taskgui.core.states import TaskState, WaitReason
from taskgui.core.status import TaskSnapshot
from taskgui.core.task import TaskId
from taskgui.store.row_decoder import RowDecoder
from taskgui.store.sqlite.lock import SchedulerLock
from taskgui.store.sqlite.opening import open_sqlite
from taskgui.store.sqlite.repository import SqliteRepository
from tests.cli.test_cli import run as run  # noqa: PLC0414  (the fixture, by name)
from tests.helpers.cli import Run
from tests.helpers.factories import T0, make_spec

COUNT = 2_000
SHOWN = 10  # runs after 3 (succeeds) and 4 (finishes); 20 runs after it
LINKED = {3, 4, SHOWN, 20}
OTHER_DOWNSTREAM = 30  # runs after 5: a task with an upstream, but not one shown


class NoWholeReads:
    """A repository that fails every read of all the tasks: what ``show`` must not do."""

    def __init__(self, inner: SqliteRepository) -> None:
        self._inner = inner

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def list_tasks(self, state: TaskState | None = None) -> list[TaskSnapshot]:
        raise AssertionError("show read every task")

    def load(self, now: datetime) -> Any:
        raise AssertionError("show loaded every task")

    def wait_reasons(self, task_ids: Collection[TaskId] | None = None) -> dict[TaskId, WaitReason]:
        assert task_ids is not None, "show read what every task waits for"
        return self._inner.wait_reasons(task_ids)


@pytest.fixture
def many_tasks(db: Path) -> Path:
    """``COUNT`` tasks; ``SHOWN`` waits for a worker, as the scheduler recorded it."""
    edges = {
        SHOWN: (Upstream(3), Upstream(4, After.FINISHED)),
        20: (Upstream(SHOWN),),
        OTHER_DOWNSTREAM: (Upstream(5),),
    }
    specs = [make_spec(0, name=f"job {n}", after=edges.get(n, ())) for n in range(1, COUNT + 1)]
    repository = SqliteRepository(db)
    try:
        repository.add_tasks(specs, T0)
        shown = repository.get(SHOWN)
        waits = shown._replace(status=shown.status._replace(waiting=WaitReason.WORKER))
        repository.apply([TaskChanged(waits)], T0)
    finally:
        repository.close()
    return db


@pytest.fixture
def decoded(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The id of every task row decoded from now on; opened stores fail whole reads."""
    ids: list[int] = []
    original = RowDecoder.snapshot

    def counting(self: RowDecoder, row: tuple[Any, ...]) -> TaskSnapshot:
        ids.append(row[0])
        return original(self, row)

    def guarded(*args: Any, **kwargs: Any) -> tuple[Any, Path | None]:
        repository, moved = open_sqlite(*args, **kwargs)
        return NoWholeReads(repository), moved

    monkeypatch.setattr(RowDecoder, "snapshot", counting)
    monkeypatch.setattr(cli, "open_sqlite", guarded)
    return ids


def test_show_reads_only_the_task_and_those_it_names(
    run: Run, many_tasks: Path, decoded: list[int]
) -> None:
    lock = SchedulerLock(many_tasks)
    lock.acquire()  # a scheduler runs it: the recorded wait reason is what show says
    try:
        text = run("show", str(SHOWN))
        as_json = run("show", str(SHOWN), "--json")
    finally:
        lock.release()

    assert text.code == 0 and as_json.code == 0, text.err + as_json.err
    assert re.search(r"^state: +pending \(waiting: worker\)$", text.out, re.M)
    after = r"after job 3 \(3\) succeeds, after job 4 \(4\) finishes \(all of them\)"
    assert re.search(rf"^runs after: +{after}$", text.out, re.M)
    assert re.search(r"^runs before: +job 20 \(20\)$", text.out, re.M)
    shown = json.loads(as_json.out)
    assert shown["waiting"] == "worker"
    assert [(edge["id"], edge["name"]) for edge in shown["after"]] == [(3, "job 3"), (4, "job 4")]
    assert shown["downstream"] == [{"id": 20, "name": "job 20"}]
    # The task, those it names, and at most the other few with upstreams of their own
    # (found by the store's index of them): not the 2,000.
    assert set(decoded) <= {*LINKED, OTHER_DOWNSTREAM}, sorted(set(decoded))[:20]
    assert len(decoded) <= 4 * len(LINKED)


def test_show_of_a_task_with_no_links_reads_that_task_alone(
    run: Run, many_tasks: Path, decoded: list[int]
) -> None:
    text = run("show", "7")

    assert text.code == 0, text.err
    assert re.search(r"^runs after: +none$", text.out, re.M)
    assert re.search(r"^runs before: +none$", text.out, re.M)
    assert "(waiting: no scheduler)" in text.out  # due at T0 and nobody runs it
    assert set(decoded) <= {7, SHOWN, 20, OTHER_DOWNSTREAM}, sorted(set(decoded))[:20]
