"""The signals a view follows, whoever runs the schedule.

``SchedulerService`` (the schedule runs in this process) and ``RemoteScheduler`` (it
runs in ``taskgui daemon``) both derive from ``ScheduleSignals``, so a window connects
to the same signals either way, declared once (``schedule_client.LiveScheduleClient``
is the protocol the views see).

Signals:
    task_added(object): TaskSnapshot of a new task.
    task_changed(object): TaskSnapshot after any change.
    task_removed(int): task id.
    tasks_loaded(object): a list of TaskSnapshot read after a view's first snapshot
        (``first_snapshot``): every task not in it arrives so (one that was may too),
        as the schedule has it at that moment.
    run_started(object): RunTicket whose process has started.
    run_output(object, str): RunTicket of a run in progress and its output so far (the
        tail), refreshed while it prints; its history row is the open run of that
        task that started at the ticket's ``dispatched_at``.
    run_finished(object, object, object): RunTicket, RunOutcome, RunResult.
    retry_scheduled(object): RetryScheduled event.
    task_exhausted(object, str): TaskExhausted event and the last run's error text.
    occurrences_skipped(object): OccurrencesSkipped event.
    error_occurred(str): a message for a person (disk full, database locked, ...).
    store_lost(str): the schedule has stopped for good (its database file was deleted
        or replaced under it); the message says what happened and what was kept.
    owner_changed(str): who runs the schedule now ("" for nobody); only a client of
        a schedule run elsewhere emits it (this process never changes hands).
    store_unreachable(str): the schedule cannot be read now (a shared schedule's server
        went away): what is shown is as last read, and reading is retried. The text is
        why (no password, no place), again whenever the reason changes. Only a client
        of a schedule run elsewhere emits it.
    store_reachable(): the schedule is read again after ``store_unreachable``; what is
        shown is current again.
    stopped(): shutdown finished; every run is recorded.
    history_read(int): a task's history was read anew (only a client that reads it on
        another thread emits it; ``history`` then answers with it).
    tasks_stored(object): the tasks this process asked to add are stored, as a list of
        (the TaskSpec passed to ``add_task``/``add_tasks``, its stored TaskSnapshot)
        pairs, after their ``task_added`` (only a client that stores them on another
        thread emits it: its ``add_task`` returned before the ids were known).
"""

from __future__ import annotations

from PySide6.QtCore import QObject, Signal


class ScheduleSignals(QObject):
    """The live view of a schedule; see the module docstring."""

    task_added = Signal(object)
    task_changed = Signal(object)
    task_removed = Signal(int)
    tasks_loaded = Signal(object)
    run_started = Signal(object)
    run_output = Signal(object, str)
    run_finished = Signal(object, object, object)
    retry_scheduled = Signal(object)
    task_exhausted = Signal(object, str)
    occurrences_skipped = Signal(object)
    error_occurred = Signal(str)
    store_lost = Signal(str)
    owner_changed = Signal(str)
    store_unreachable = Signal(str)
    store_reachable = Signal()
    stopped = Signal()
    history_read = Signal(int)
    tasks_stored = Signal(object)
