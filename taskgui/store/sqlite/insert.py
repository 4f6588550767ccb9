"""Writing new tasks: the statement that turns ``codec.new_task_values`` into rows.

A new task's row is 26 columns, but only 16 values come from Python; the initial
status (state from ``paused``, attempt 0, the first occurrence queued, timestamps) is
written by the statement itself. Binding parameters is most of the cost of an insert,
so this alone takes a third off a bulk import. A batch also puts many rows in one
statement (``ROWS_PER_STATEMENT``): each statement execution costs about as much as
binding a whole row, and a batch of 10,000 then runs 200 statements instead of 10,000.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from functools import lru_cache
from itertools import chain
from typing import Any

from taskgui.core.states import SlotKind, TaskState
from taskgui.store import codec

ROWS_PER_STATEMENT = 50  # 701 parameters; SQLite allows 32,766
_VALUES = len(codec.NEW_TASK_VALUES)
_COLUMNS = ", ".join((*codec.TASK_COLUMNS, "created_at", "updated_at"))


def _row(first: int) -> str:
    """One row's VALUES tuple, its parameters numbered from ``first``; ?1 is "now"."""
    given = [f"?{first + offset}" for offset in range(_VALUES)]
    *definition, paused, notify, rules, slot = given
    initial_status = (
        f"CASE {paused} WHEN 0 THEN '{TaskState.PENDING.value}' "
        f"ELSE '{TaskState.PAUSED.value}' END",  # state
        "0",  # attempt
        slot,  # next_run_at
        f"CASE WHEN {slot} IS NULL THEN NULL ELSE '{SlotKind.OCCURRENCE.value}' END",
        slot,  # scheduled_at
        "1",  # slot_attempt
        "NULL",  # deferred_at
        "NULL",  # last_outcome
        "NULL",  # last_run_at
        "NULL",  # after_marks
        "?1",  # created_at
        "?1",  # updated_at
    )
    return f"({', '.join((*definition, paused, notify, rules, *initial_status))})"


@lru_cache(maxsize=4)
def insert_statement(rows: int) -> str:
    """INSERT of ``rows`` new tasks; parameters: now (µs), then each row's values."""
    values = ", ".join(_row(2 + row * _VALUES) for row in range(rows))
    return f"INSERT INTO tasks ({_COLUMNS}) VALUES {values}"


def insert_new_tasks(
    connection: sqlite3.Connection, rows: Sequence[tuple[Any, ...]], now_us: int
) -> int | None:
    """Insert rows of ``codec.new_task_values``; return the last row id.

    A row whose id is None gets the next id from SQLite. Call inside a transaction.
    """
    execute = connection.execute
    full = len(rows) - len(rows) % ROWS_PER_STATEMENT
    if full:
        statement = insert_statement(ROWS_PER_STATEMENT)
        connection.executemany(
            statement,
            (
                (now_us, *chain.from_iterable(rows[start : start + ROWS_PER_STATEMENT]))
                for start in range(0, full, ROWS_PER_STATEMENT)
            ),
        )
    cursor = None
    if full < len(rows):
        rest = rows[full:]
        cursor = execute(insert_statement(len(rest)), (now_us, *chain.from_iterable(rest)))
    return None if cursor is None else cursor.lastrowid
