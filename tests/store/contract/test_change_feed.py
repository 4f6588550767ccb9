"""The ChangeFeed contract: told of other connections' commits, never of one's own.

A follower (a window showing a daemon's schedule, the scheduler waiting for the
CLI's requests) reloads only when its feed says so; a feed that misses a commit
leaves a view stale, one that reports its own writes makes the scheduler wake for
nothing on every dispatch.
"""

from __future__ import annotations

import os
import select
import time

from taskgui.core.engine.engine import Engine
from taskgui.core.operation import Op
from taskgui.core.states import RunOutcome
from taskgui.store.protocols import ScheduleStore
from tests.helpers.factories import T0, at, make_spec
from tests.store.contract.backends import Backend

FEED_WAIT = 5.0  # seconds a notification may take to arrive (PostgreSQL: a socket)


def eventually(feed: ScheduleStore) -> bool:
    """``feed.changed()``, given a moment: a server's notice travels after the commit,
    where SQLite's data_version changes with it. Waits on the condition, not a time."""
    deadline = time.monotonic() + FEED_WAIT
    while not feed.changed():
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.005)
    return True


def test_nothing_happened_nothing_changed(store: ScheduleStore, sender: ScheduleStore) -> None:
    assert store.changed() is False  # the first look (a feed watches from here on)
    assert sender.changed() is False
    assert store.changed() is False


def test_a_commit_by_another_connection_is_reported_once(
    store: ScheduleStore, sender: ScheduleStore
) -> None:
    store.changed()
    sender.submit_request(Op.PAUSE.value, 1, None, T0)
    assert eventually(store)
    assert store.changed() is False  # until the next commit


def test_own_commits_are_not_reported(store: ScheduleStore, sender: ScheduleStore) -> None:
    store.changed()
    sender.changed()
    (spec,) = store.add_tasks([make_spec(0)], T0)
    engine = Engine()
    engine.add(spec)
    store.apply(engine.due(T0, 1), T0)
    store.complete_request(store.submit_request(Op.PAUSE.value, 1, None, T0), None, T0)
    assert eventually(sender)  # but the other connection hears of them
    assert store.changed() is False


def test_a_commit_of_its_own_does_not_hide_another_ones(
    store: ScheduleStore, sender: ScheduleStore
) -> None:
    store.changed()
    sender.submit_request(Op.PAUSE.value, 1, None, T0)
    store.add_tasks([make_spec(0)], T0)
    assert eventually(store)


def test_every_kind_of_write_by_the_scheduler_reaches_a_follower(
    store: ScheduleStore, sender: ScheduleStore
) -> None:
    """A follower reloads on these: a task added, a run started, its output, its end."""
    engine = Engine()
    sender.changed()
    (spec,) = store.add_tasks([make_spec(0)], T0)
    assert eventually(sender)
    engine.add(spec)
    events = engine.due(T0, 1)
    store.apply(events, T0)
    assert eventually(sender)
    (run_id,) = engine.running_runs
    store.record_run_pid(run_id, 4242)
    assert eventually(sender)
    store.record_run_output(run_id, "half way\n")
    assert eventually(sender)
    assert sender.runs(spec.id)[0].output == "half way\n"
    store.apply(engine.finished(run_id, RunOutcome.SUCCEEDED, at(1)), at(1))
    assert eventually(sender)
    assert sender.runs(spec.id)[0].outcome is RunOutcome.SUCCEEDED
    assert sender.changed() is False


def test_what_a_connection_commits_the_other_reads(
    store: ScheduleStore, sender: ScheduleStore
) -> None:
    (spec,) = store.add_tasks([make_spec(0, name="shared")], T0)
    assert [task.spec.name for task in sender.list_tasks()] == ["shared"]
    assert sender.get(spec.id).spec == spec


def test_a_feed_asked_on_a_timer_says_so(store: ScheduleStore) -> None:
    descriptor = store.fileno()
    assert descriptor is None or descriptor >= 0


def test_another_store_s_commits_are_not_news(backend: Backend) -> None:
    one, other = backend.open("one"), backend.open("other")
    one.changed()
    other.changed()
    backend.open("one").submit_request(Op.PAUSE.value, 1, None, T0)
    assert eventually(one)
    assert other.changed() is False


def _marks(paths: tuple[str, ...]) -> list[tuple[int, int, int] | None]:
    """What a file watcher sees change: each path's inode, size and modification time."""
    marks: list[tuple[int, int, int] | None] = []
    for path in paths:
        try:
            found = os.stat(path)
        except FileNotFoundError:
            marks.append(None)
        else:
            marks.append((found.st_ino, found.st_size, found.st_mtime_ns))
    return marks


def test_a_commit_by_another_connection_can_wake_an_event_loop(
    store: ScheduleStore, sender: ScheduleStore
) -> None:
    """The service sleeps until this (runtime/feed_watch.py): a descriptor becomes
    readable, or a watched file changes. Asking ``changed`` then drains the descriptor,
    so an event loop watching it does not spin."""
    store.changed()
    descriptor, paths = store.fileno(), store.watch_paths()
    assert descriptor is not None or paths, "a feed must offer a way to be woken"
    before = _marks(paths)
    if descriptor is not None:
        assert select.select([descriptor], [], [], 0)[0] == []
    time.sleep(0.01)  # a modification time one tick later than the last commit's
    sender.submit_request(Op.PAUSE.value, 1, None, T0)
    if descriptor is not None:
        assert select.select([descriptor], [], [], FEED_WAIT)[0] == [descriptor]
    else:
        assert _marks(paths) != before
    assert eventually(store)
    if descriptor is not None:
        assert select.select([descriptor], [], [], 0)[0] == []  # drained
