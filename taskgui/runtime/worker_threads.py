"""Long-lived worker threads fed by one queue: the worker pool's threads.

Plain ``threading`` on purpose (see ``taskgui.runtime.pool`` for what was measured
against ``QThreadPool``): a job is an ordinary callable, held by the queue until a
thread takes it and by that thread until it returns, and by nothing after. A thread
also lets go of its last job before it waits for the next, so the jobs alive at any
moment are the ones queued or running, never the ones that ran.

Queued jobs are taken most urgent first (``rank``, lower first; in order of arrival
within a rank), and one still queued can be taken back (``take_back``): the worker
pool queues runs beyond its free workers, and a more urgent run that arrives later
must start before them.

Threads start when work arrives and no thread is idle (up to ``size``), as
``QThreadPool`` starts them, and are kept while idle: the next job then costs one
wake-up, not a new OS thread. ``resize`` to fewer lets the surplus end as each becomes
idle; ``close`` ends them all (a running job finishes first). They are daemon threads,
so one still blocked in a command cannot hold up the interpreter's exit.
"""

from __future__ import annotations

import heapq
import itertools
import logging
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)

Job = Callable[[], None]


class WorkerThreads:
    """At most ``size`` threads running queued jobs, first in, first out."""

    def __init__(self, size: int, *, name: str = "worker") -> None:
        if size < 1:
            raise ValueError("a thread pool needs at least one thread")
        self._size = size
        self._name = name
        self._numbers = itertools.count(1)
        self._lock = threading.Lock()
        self._work = threading.Condition(self._lock)  # a job queued, or fewer threads wanted
        self._idle = threading.Condition(self._lock)  # a job finished
        # (rank, arrival) of each job queued, a heap; the job itself by its arrival
        # while queued (a job taken back leaves its key in the heap, skipped later).
        self._queue: list[tuple[int, int]] = []
        self._queued: dict[int, Job] = {}
        self._arrivals = itertools.count()
        self._threads: set[threading.Thread] = set()
        self._waiting = 0  # threads waiting for a job
        self._unfinished = 0  # jobs queued or running
        self._closed = False

    @property
    def size(self) -> int:
        return self._size

    @property
    def queued(self) -> int:
        """Jobs waiting for a thread (a moment's reading, for the pool to pace itself)."""
        return len(self._queued)

    @property
    def thread_count(self) -> int:
        """Threads alive or about to end (for tests: they are kept while idle)."""
        with self._lock:
            return len(self._threads)

    def resize(self, size: int) -> None:
        if size < 1:
            raise ValueError("a thread pool needs at least one thread")
        with self._lock:
            self._size = size
            self._start_threads_locked()
            self._work.notify_all()  # the surplus, if any, ends once idle

    def start(self, job: Job, rank: int = 0) -> int:
        """Queue ``job``; it runs on a thread of its own as soon as one is free, before
        every queued job of a higher ``rank``. Returns its number for ``take_back``."""
        with self._lock:
            if self._closed:
                raise RuntimeError("the worker threads are closed")
            arrival = next(self._arrivals)
            heapq.heappush(self._queue, (rank, arrival))
            self._queued[arrival] = job
            self._unfinished += 1
            self._start_threads_locked()
            self._work.notify()
            return arrival

    def take_back(self, number: int) -> bool:
        """Unqueue the job ``start`` numbered so if no thread has taken it yet: it will
        never run. False if it was taken (it runs, or ran)."""
        with self._lock:
            if self._queued.pop(number, None) is None:
                return False
            self._unfinished -= 1
            if self._unfinished == 0:
                self._idle.notify_all()
            return True

    def wait_for_done(self, timeout: float | None = None) -> bool:
        """Block until no job is queued or running; False if ``timeout`` ran out."""
        with self._lock:
            return self._idle.wait_for(lambda: self._unfinished == 0, timeout)

    def close(self, *_: object) -> None:
        """End every thread once it is idle; queued jobs that no thread took are dropped.

        Takes (and ignores) arguments so that it can be connected to ``destroyed``.
        """
        with self._lock:
            self._closed = True
            self._unfinished -= len(self._queued)
            self._queue.clear()
            self._queued.clear()
            self._idle.notify_all()
            self._work.notify_all()

    def _start_threads_locked(self) -> None:
        """Enough threads for the queue: one per job that no idle thread will take."""
        wanted = min(self._size, len(self._threads) + len(self._queued) - self._waiting)
        while len(self._threads) < wanted:
            thread = threading.Thread(
                target=self._serve, name=f"{self._name}-{next(self._numbers)}", daemon=True
            )
            self._threads.add(thread)
            thread.start()

    def _serve(self) -> None:
        me = threading.current_thread()
        while True:
            with self._lock:
                job = self._next_job_locked(me)
            if job is None:
                return
            try:
                job()
            except BaseException:  # a job reports its own failures; this is a last resort
                log.exception("a job failed on worker thread %s", me.name)
            finally:
                job = None  # let go before waiting: a finished job is garbage now
                with self._lock:
                    self._unfinished -= 1
                    if self._unfinished == 0:
                        self._idle.notify_all()

    def _next_job_locked(self, me: threading.Thread) -> Job | None:
        """The next job, waiting for one; None when this thread should end."""
        while True:
            if self._closed or len(self._threads) > self._size:
                self._threads.discard(me)
                return None
            while self._queue:
                job = self._queued.pop(heapq.heappop(self._queue)[1], None)
                if job is not None:
                    return job
            self._waiting += 1
            try:
                self._work.wait()
            finally:
                self._waiting -= 1
