"""Moving a schedule in: every task, its state, its history and its quarantine, from a
SQLite file into an empty PostgreSQL schema, in one transaction.

Rows are copied as stored, ids kept (scripts and history name tasks by id), so what a
person sees after the move is what they saw before. Requests are not copied: they
were for the process that ran the file's schedule. The target must hold no tasks: a
move never merges two schedules.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from taskgui.store import codec
from taskgui.store.errors import StoreError
from taskgui.store.postgres.reads import pg_text
from taskgui.store.postgres.repository import PostgresRepository

_TASK_COLUMNS = (*codec.TASK_COLUMNS, "created_at", "updated_at", "waiting")
_RUN_COLUMNS = (
    "id, task_id, attempt, kind, scheduled_at, started_at, finished_at, outcome, "
    "exit_code, error, output, pid, missed"
)


@dataclass(frozen=True, slots=True)
class MoveReport:
    tasks: int
    runs: int
    quarantined: int


def move_in(source: Path, target: PostgresRepository) -> MoveReport:
    """Copy the SQLite database at ``source`` into ``target``; StoreError if ``target``
    already holds tasks. The file is opened read-only and left as it was."""
    connection = sqlite3.connect(f"file:{source}?mode=ro", uri=True)
    try:
        tasks = connection.execute(
            f"SELECT {', '.join(_TASK_COLUMNS)} FROM tasks ORDER BY id"
        ).fetchall()
        runs = connection.execute(f"SELECT {_RUN_COLUMNS} FROM runs ORDER BY id").fetchall()
        quarantine = connection.execute("SELECT task_id, error, at FROM quarantine").fetchall()
        [(last_id,)] = connection.execute(
            "SELECT coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'tasks'), 0)"
        ).fetchall()
    except sqlite3.Error as error:
        raise StoreError(f"cannot read {source} as a taskgui database: {error}") from None
    finally:
        connection.close()
    text_at = {index for index, name in enumerate(_TASK_COLUMNS) if name in ("name", "waiting")}
    with target.session.transaction() as pg:
        [(held,)] = pg.execute("SELECT count(*) FROM tasks").fetchall()
        if held:
            raise StoreError(
                f"the target already holds {held} task(s); taskgui moves a schedule into an "
                "empty one only (never merges two)"
            )
        with pg.cursor() as cursor:
            cursor.executemany(
                f"INSERT INTO tasks ({', '.join(_TASK_COLUMNS)}) "
                f"VALUES ({', '.join(['%s'] * len(_TASK_COLUMNS))})",
                [
                    tuple(
                        pg_text(value) if i in text_at and isinstance(value, str) else value
                        for i, value in enumerate(row)
                    )
                    for row in tasks
                ],
            )
            cursor.executemany(
                f"INSERT INTO runs ({_RUN_COLUMNS}) OVERRIDING SYSTEM VALUE "
                f"VALUES ({', '.join(['%s'] * 13)})",
                [
                    (
                        *row[:9],
                        None if row[9] is None else pg_text(row[9]),
                        pg_text(row[10]),
                        *row[11:],
                    )
                    for row in runs
                ],
            )
            cursor.executemany(
                "INSERT INTO quarantine (task_id, error, at) VALUES (%s, %s, %s)",
                [(task_id, pg_text(error), at) for task_id, error, at in quarantine],
            )
        pg.execute(
            "UPDATE counters SET value = greatest(value, %s) WHERE name = 'task_id'",
            (max(int(last_id), max((row[0] for row in tasks), default=0)),),
        )
        pg.execute(
            "SELECT setval(pg_get_serial_sequence('runs', 'id'), greatest(last, 1), last > 0) "
            "FROM (SELECT coalesce(max(id), 0) AS last FROM runs) AS runs_so_far"
        )
    return MoveReport(tasks=len(tasks), runs=len(runs), quarantined=len(quarantine))


def _run_row(row: tuple[Any, ...]) -> tuple[Any, ...]:
    error, output = row[9], row[10]
    return (*row[:9], None if error is None else pg_text(error), pg_text(output), *row[11:])
