"""The program's own defaults that more than one front end needs, each defined once.

The window, the daemon and the CLI each had their own copy, and two of them disagreed
(the window gave running commands 5 s at shutdown, the daemon 10 s). They live in core
because every layer may import it and none of the values depends on Qt or a store.
"""

from __future__ import annotations

# How many tasks may run at once unless the person says otherwise (settings, --workers).
DEFAULT_WORKERS = 4

# Under a backlog, runs queued per worker beyond the free ones (runtime/pool.py): a worker
# that finishes takes the next without a round trip through the service thread. On the
# stores that record a queued run as not yet started (SQLite), so that a crash gives it
# back rather than counting it a failed attempt (control/recovery.py). Four: the queue
# must carry the workers through the service thread's sleep between two takings of
# their reports (BACKLOG_REPORT_MS) and its work on them; with one or two they ran dry
# (measured: 0.55-0.63x APScheduler's memory store with two, 0.67-0.70x with four).
QUEUE_PER_WORKER = 4

# Seconds a starting scheduler waits for the SQLite scheduler lock: a CLI command holds
# it briefly while it performs an operation, and a start should not fail over that.
LOCK_WAIT = 2.0

# Seconds running commands get to finish when the schedule stops (quit, handover, the
# daemon's SIGTERM), before they are sent SIGTERM themselves (and SIGKILL after the
# runner's kill grace). 5 s, not the daemon's old 10 s: a person is looking at the
# window's "stopping" notice for this long, a desktop logout or `systemctl stop` should
# not be held up longer than grace plus kill grace (10 s in all, well inside systemd's
# 90 s TimeoutStopSec), and a run stopped here is recorded as interrupted and retried
# at the next start anyway, so waiting longer buys little. One value also means a run
# gets the same chance whichever front end holds the schedule.
SHUTDOWN_GRACE = 5.0

# Seconds a command sent SIGTERM (timed out, cancelled, or still running after the
# shutdown grace) gets before its process group is sent SIGKILL.
KILL_GRACE = 5.0

# Seconds a client (the CLI, a window following a daemon) waits for the process that
# runs the schedule to answer a request before it says that nobody answered.
REQUEST_TIMEOUT = 10.0
