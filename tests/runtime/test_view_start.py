"""A view's start over a big schedule: the tasks at hand at once, the rest streamed in
from a worker thread (runtime/view_start.py, runtime/streamed_read.py).

Real database file, real worker thread, real event loop: every task must reach the
view (in the first snapshot or in one ``tasks_loaded`` batch, or both), the engine
must hold them all in the end, a row that cannot be read must be reported and set
aside as at any read, and the cyclic collector must be on again afterwards.
"""

from __future__ import annotations

import gc
from collections import Counter
from datetime import timedelta
from pathlib import Path

from pytestqt.qtbot import QtBot

from taskgui.core.status import TaskSnapshot
from taskgui.store.sqlite.task_stream import BATCH, FIRST_BATCH
from tests.helpers.store import raw_connection
from tests.runtime.test_hydration import CLOCK, service_on, stored_schedule


def test_the_first_snapshot_is_at_hand_and_every_other_task_follows_once(
    tmp_path: Path, qtbot: QtBot
) -> None:
    db = tmp_path / "taskgui.sqlite3"
    count = FIRST_BATCH + 2 * BATCH
    due_now, bad = stored_schedule(db, count, bad_in=timedelta(hours=2))
    with service_on(db, qtbot) as (service, errors):
        batches: list[list[TaskSnapshot]] = []
        service.tasks_loaded.connect(batches.append)
        service.start()
        first = service.first_snapshot()
        assert service.engine.deferred_count > count - 10  # nothing waited for the rest
        assert not gc.isenabled()  # held off while the worker reads
        with qtbot.waitSignal(service.loaded, timeout=20_000):
            pass

        streamed = Counter(s.id for b in batches for s in b)
        assert set(streamed) | {s.id for s in first} == set(range(1, count + 3)) - {bad}
        assert max(streamed.values()) == 1 and len(batches) >= 3
        assert service.engine.deferred_count == 0 and len(service.engine) == count + 1
        qtbot.waitUntil(gc.isenabled, timeout=5_000)  # once the worker has ended
        assert len(errors) == 1 and f"task {bad} could not be read" in errors[0]
        with raw_connection(db) as other:  # set aside and kept on disk
            assert other.execute("SELECT task_id FROM quarantine").fetchall() == [(bad,)]
        assert service.task(due_now).id == due_now


def test_stopping_while_the_rest_is_read_stops_the_worker_and_frees_the_collector(
    tmp_path: Path, qtbot: QtBot
) -> None:
    db = tmp_path / "taskgui.sqlite3"
    stored_schedule(db, 4 * BATCH)
    with service_on(db, qtbot) as (service, _errors):
        service.start()
        service.first_snapshot()
        assert not gc.isenabled()
    assert gc.isenabled()  # shutdown (service_on's exit) stopped the stream


def test_a_change_made_while_the_rest_is_read_wins_over_the_read_row(
    tmp_path: Path, qtbot: QtBot
) -> None:
    db = tmp_path / "taskgui.sqlite3"
    count = FIRST_BATCH + BATCH
    stored_schedule(db, count)
    with service_on(db, qtbot) as (service, _errors):
        latest: dict[int, TaskSnapshot] = {}
        service.tasks_loaded.connect(lambda batch: latest.update((s.id, s) for s in batch))
        service.task_changed.connect(lambda s: latest.__setitem__(s.id, s))
        service.start()
        service.first_snapshot()
        target = count  # in the last batch: read after the change below
        service.pause(target)
        with qtbot.waitSignal(service.loaded, timeout=20_000):
            pass
        assert latest[target].spec.paused and service.task(target).spec.paused
        assert CLOCK.now() < latest[target].status.next_run_at  # type: ignore[operator]
