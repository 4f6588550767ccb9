"""A run's row, as both backends store and select it, and the RunRecord it reads as."""

from __future__ import annotations

from typing import Any

from taskgui.core.states import RunOutcome, SlotKind
from taskgui.core.status import RunRecord
from taskgui.store.times import from_us, opt_from_us

# What a read of runs selects, in the order ``run_record`` reads: ``SELECT {RUN_COLUMNS}``.
RUN_COLUMNS = (
    "id, task_id, attempt, kind, scheduled_at, started_at, finished_at, outcome, "
    "exit_code, error, output, pid, missed"
)
# The same on PostgreSQL, where a shared schedule's leader writes a run's row when it
# dispatches it (under its epoch; its start column the dispatch time, which the leader's
# own bookkeeping reads) and a node claims it later, maybe much later (a pin to a node
# that is away, conditions no machine meets): until a node claims it, it has started
# nowhere, and reads so. (A single process on the same store writes no epoch: its open
# runs did start.)
SHARED_RUN_COLUMNS = RUN_COLUMNS.replace(
    "started_at",
    "CASE WHEN node IS NULL AND epoch IS NOT NULL AND outcome IS NULL THEN NULL "
    "ELSE started_at END",
    1,
)


def run_record(row: tuple[Any, ...]) -> RunRecord:
    """A run's row (``RUN_COLUMNS``) as the RunRecord views read."""
    return RunRecord(
        id=row[0],
        task_id=row[1],
        attempt=row[2],
        kind=SlotKind(row[3]),
        scheduled_at=from_us(row[4]),
        started_at=opt_from_us(row[5]),
        finished_at=opt_from_us(row[6]),
        outcome=RunOutcome(row[7]) if row[7] else None,
        exit_code=row[8],
        error=row[9],
        output=row[10],
        pid=row[11],
        missed=row[12] or 0,
    )
