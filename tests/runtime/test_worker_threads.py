"""The worker pool's threads: bounded, first in first out, kept while idle, and
holding on to no job once it has run (the memory leak of QThreadPool was exactly that).

Real threads; every wait is on an event or a condition with a timeout.
"""

from __future__ import annotations

import gc
import threading
import time
import weakref
from collections.abc import Callable, Iterator

import pytest

from taskgui.runtime.worker_threads import WorkerThreads

WAIT = 10.0


@pytest.fixture
def threads() -> Iterator[WorkerThreads]:
    pool = WorkerThreads(2, name="test-worker")
    yield pool
    pool.close()


def wait_until(predicate: Callable[[], bool]) -> bool:
    """Poll ``predicate`` briefly until true or WAIT seconds have passed."""
    end = time.monotonic() + WAIT
    while not predicate():
        if time.monotonic() > end:
            return False
        time.sleep(0.01)
    return True


class Blocker:
    """A job that says it began and then waits until released."""

    def __init__(self) -> None:
        self.began = threading.Event()
        self.release = threading.Event()

    def __call__(self) -> None:
        self.began.set()
        assert self.release.wait(WAIT)


def test_jobs_run_in_order_on_at_most_size_threads(threads: WorkerThreads) -> None:
    blockers = [Blocker() for _ in range(3)]
    for blocker in blockers:
        threads.start(blocker)
    assert blockers[0].began.wait(WAIT) and blockers[1].began.wait(WAIT)
    assert not blockers[2].began.is_set()  # both threads are taken
    assert threads.thread_count == 2
    blockers[0].release.set()
    assert blockers[2].began.wait(WAIT)  # the freed thread takes the queued job
    for blocker in blockers:
        blocker.release.set()
    assert threads.wait_for_done(WAIT)
    assert threads.thread_count == 2  # kept while idle


def test_threads_start_only_when_work_finds_none_idle(threads: WorkerThreads) -> None:
    assert threads.thread_count == 0
    for _ in range(5):
        done = threading.Event()
        threads.start(done.set)
        assert done.wait(WAIT)
        assert threads.wait_for_done(WAIT)
    assert threads.thread_count == 1  # one at a time needs one thread, reused


def test_a_job_is_let_go_of_once_it_has_run(threads: WorkerThreads) -> None:
    class Job:
        def __call__(self) -> None:
            pass

    refs = []
    for _ in range(200):
        job = Job()
        refs.append(weakref.ref(job))
        threads.start(job)
        del job
    assert threads.wait_for_done(WAIT)
    gc.collect()
    assert [ref for ref in refs if ref() is not None] == []


def test_a_job_that_raises_leaves_its_thread_working(
    threads: WorkerThreads, caplog: pytest.LogCaptureFixture
) -> None:
    def fail() -> None:
        raise ValueError("boom")

    done = threading.Event()
    threads.start(fail)
    threads.start(done.set)
    assert done.wait(WAIT)
    assert threads.wait_for_done(WAIT)
    assert "a job failed on worker thread" in caplog.text


def test_resizing_down_ends_the_surplus_once_idle_and_up_adds_threads(
    threads: WorkerThreads,
) -> None:
    blockers = [Blocker() for _ in range(2)]
    for blocker in blockers:
        threads.start(blocker)
        assert blocker.began.wait(WAIT)
    threads.resize(1)
    assert threads.size == 1 and threads.thread_count == 2  # both are busy
    for blocker in blockers:
        blocker.release.set()
    assert threads.wait_for_done(WAIT)
    assert wait_until(lambda: threads.thread_count == 1)  # the surplus ends once idle

    threads.resize(3)
    wider = [Blocker() for _ in range(3)]
    for blocker in wider:
        threads.start(blocker)
    assert all(blocker.began.wait(WAIT) for blocker in wider)  # three at once
    for blocker in wider:
        blocker.release.set()
    assert threads.wait_for_done(WAIT)


def test_close_ends_every_thread_after_its_job(threads: WorkerThreads) -> None:
    blocker = Blocker()
    threads.start(blocker)
    assert blocker.began.wait(WAIT)
    mine = [t for t in threading.enumerate() if t.name.startswith("test-worker")]
    threads.close()
    with pytest.raises(RuntimeError, match="closed"):
        threads.start(lambda: None)
    blocker.release.set()
    for thread in mine:
        thread.join(WAIT)
        assert not thread.is_alive()
    assert threads.thread_count == 0


def test_wait_for_done_times_out_while_a_job_runs(threads: WorkerThreads) -> None:
    blocker = Blocker()
    threads.start(blocker)
    assert blocker.began.wait(WAIT)
    assert not threads.wait_for_done(0.01)
    blocker.release.set()
    assert threads.wait_for_done(WAIT)


def test_sizes_below_one_are_refused() -> None:
    with pytest.raises(ValueError, match="at least one"):
        WorkerThreads(0)
    pool = WorkerThreads(1)
    with pytest.raises(ValueError, match="at least one"):
        pool.resize(0)
    pool.close()
