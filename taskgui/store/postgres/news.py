"""The leader's outbox: every run's end is told once, whoever leads when it ends.

A run's end is told (its log line, its webhook or mail) by the node whose engine
decided what follows it, from the events that engine committed (``runtime.cluster.
news``). Telling right after the commit, from memory, loses the news when the lead
changes hands at the wrong moment: a leader killed between its commit and its
telling, or a node's end committed while no engine was there to decide it. So the
telling rests on the database, not on timing:

* **one row per decision, in the decision's commit.** Every fenced write (a leader's,
  or the CLI's while it leads for a moment) inserts the events to tell (``RunFinished``,
  ``RetryScheduled``, ``TaskExhausted``, with the results the running node recorded)
  as one ``news`` row in the same transaction as the decision. The fencing token
  already makes each end decided exactly once (a fenced-off write rolls back, news
  and all; a new leader decides only ends no commit decided: a task still stored as
  running, ``Engine.load``'s ``carried_on``), so each end has exactly one row.
* **the row names its teller** (node and process id), and the process that committed
  it tells it at once and deletes the row when its log line is written and the
  outside channels have sent it (``told``).
* **an orphaned row is the leader's.** A row whose teller stopped answering (the same
  rule as a silent node's runs: no heartbeat for ``dead_after``, stopped, or a new
  process under its name) or never was a node (the CLI) is claimed by the leader, in
  one transaction fenced by its lease (``orphaned``), and told by it. Claims move the
  teller, so two leaders never both claim a row, and an old leader woken from a pause
  claims nothing.

What is left is the gap every outbox has: a teller killed after a channel took the
message and before its delete committed (the time of the send and one commit) is
told again by the next leader, which logs that it may repeat it. Nothing is lost.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from psycopg import Connection

from taskgui.core.events import Event, RetryScheduled, RunFinished, TaskExhausted
from taskgui.core.states import RunOutcome, SlotKind
from taskgui.core.status import RunId, RunResult, RunTicket
from taskgui.store import codec
from taskgui.store.postgres.cluster import holds_lease
from taskgui.store.postgres.session import Session

BODY_VERSION = 1
TOLD = (RunFinished, RetryScheduled, TaskExhausted)  # what the log and the relay hear


@dataclass(frozen=True, slots=True, kw_only=True)
class NewsItem:
    """One committed decision to tell. ``again``: claimed from ``teller``, which may
    have told some of it before it stopped answering."""

    id: int
    events: tuple[Event, ...]
    results: Mapping[RunId, RunResult] = field(default_factory=dict)
    again: bool = False
    teller: str = ""


def to_tell(events: Sequence[Event]) -> list[Event]:
    return [event for event in events if isinstance(event, TOLD)]


# ------------------------------------------------------------------ the body


def _ticket(ticket: RunTicket) -> dict[str, Any]:
    return {
        "run_id": ticket.run_id,
        "task_id": ticket.task_id,
        "attempt": ticket.attempt,
        "kind": ticket.kind.value,
        "scheduled_at": codec.to_us(ticket.scheduled_at),
        "dispatched_at": codec.to_us(ticket.dispatched_at),
    }


def _event(event: Event) -> dict[str, Any]:
    if isinstance(event, RunFinished):
        return {
            "finished": _ticket(event.run),
            "outcome": event.outcome.value,
            "at": codec.to_us(event.finished_at),
        }
    if isinstance(event, RetryScheduled):
        return {
            "retry": event.task_id,
            "attempt": event.attempt,
            "max_attempts": event.max_attempts,
            "run_at": codec.to_us(event.run_at),
            "delay_us": event.delay // timedelta(microseconds=1),
        }
    assert isinstance(event, TaskExhausted)
    return {
        "exhausted": event.task_id,
        "name": event.name,
        "attempts": event.attempts,
        "outcome": event.outcome.value,
    }


def encode(events: Sequence[Event], results: Mapping[RunId, RunResult]) -> str:
    """The row's body: the events to tell and the results of the runs that ended (the
    exit status and error; the output stays in the run's row)."""
    return json.dumps(
        {
            "v": BODY_VERSION,
            "events": [_event(event) for event in events],
            "results": [
                [run_id, result.exit_code, result.error]
                for run_id, result in results.items()
                if any(isinstance(e, RunFinished) and e.run.run_id == run_id for e in events)
            ],
        }
    )


def _decode_event(item: Mapping[str, Any]) -> Event:
    if "finished" in item:
        run = item["finished"]
        ticket = RunTicket(
            run_id=int(run["run_id"]),
            task_id=int(run["task_id"]),
            attempt=int(run["attempt"]),
            kind=SlotKind(run["kind"]),
            scheduled_at=codec.from_us(run["scheduled_at"]),
            dispatched_at=codec.from_us(run["dispatched_at"]),
        )
        return RunFinished(ticket, RunOutcome(item["outcome"]), codec.from_us(item["at"]))
    if "retry" in item:
        return RetryScheduled(
            task_id=int(item["retry"]),
            attempt=int(item["attempt"]),
            max_attempts=int(item["max_attempts"]),
            run_at=codec.from_us(item["run_at"]),
            delay=timedelta(microseconds=int(item["delay_us"])),
        )
    return TaskExhausted(
        task_id=int(item["exhausted"]),
        name=str(item["name"]),
        attempts=int(item["attempts"]),
        outcome=RunOutcome(item["outcome"]),
    )


def decode(body: str) -> tuple[tuple[Event, ...], dict[RunId, RunResult]]:
    """The events and results of a row's body; ValueError when it is not one (a
    newer version's, or damaged)."""
    try:
        data = json.loads(body)
        if data.get("v") != BODY_VERSION:
            raise ValueError(f"news body version {data.get('v')!r}")
        events = tuple(_decode_event(item) for item in data["events"])
        results = {
            int(run_id): RunResult(exit_code=None if code is None else int(code), error=error)
            for run_id, code, error in data["results"]
        }
    except (KeyError, TypeError, AttributeError, json.JSONDecodeError) as error:
        raise ValueError(f"unreadable news body: {error}") from None
    return events, results


# ------------------------------------------------------------------- the rows


def write(
    connection: Connection[Any],
    *,
    teller: str,
    epoch: int,
    events: Sequence[Event],
    results: Mapping[RunId, RunResult],
) -> NewsItem | None:
    """Inside a fenced write's transaction: the row for what it tells (None if
    nothing)."""
    told = to_tell(events)
    if not told:
        return None
    row = connection.execute(
        "INSERT INTO news (epoch, teller, teller_pid, body) VALUES (%s, %s, %s, %s) RETURNING id",
        (epoch, teller, os.getpid(), encode(told, results)),
    ).fetchone()
    assert row is not None
    runs = {event.run.run_id for event in told if isinstance(event, RunFinished)}
    kept = {run_id: result for run_id, result in results.items() if run_id in runs}
    return NewsItem(id=int(row[0]), events=tuple(told), results=kept, teller=teller)


class NewsRows:
    """A node's reads and writes of the outbox, on its session (one thread)."""

    def __init__(self, session: Session, node: str) -> None:
        self._session = session
        self.node = node

    def orphaned(self, epoch: int, dead_after: timedelta) -> list[NewsItem] | None:
        """As leader: claim the rows whose teller stopped answering (or never was a
        node), oldest first; None if this node no longer leads with ``epoch``."""
        pid = os.getpid()
        with self._session.transaction() as connection:
            if not holds_lease(connection, self.node, epoch):
                return None
            rows = connection.execute(
                "UPDATE news w SET teller = %(node)s, teller_pid = %(pid)s "
                "FROM (SELECT id, teller FROM news o WHERE NOT (o.teller = %(node)s "
                "AND o.teller_pid = %(pid)s) AND NOT EXISTS (SELECT 1 FROM nodes n "
                "WHERE n.name = o.teller AND n.pid = o.teller_pid AND n.stopped_at IS NULL "
                "AND n.last_heartbeat > clock_timestamp() - %(dead)s) FOR UPDATE) old "
                "WHERE w.id = old.id RETURNING w.id, old.teller, w.body",
                {"node": self.node, "pid": pid, "dead": dead_after},
            ).fetchall()
        items: list[NewsItem] = []
        for row_id, teller, body in sorted(rows):
            try:
                events, results = decode(body)
            except ValueError:
                continue  # a newer taskgui's: kept (claimed, so not read again here)
            items.append(
                NewsItem(id=int(row_id), events=events, results=results, again=True, teller=teller)
            )
        return items

    def told(self, ids: Sequence[int]) -> None:
        """These rows were told: delete them."""
        if ids:
            self._session.execute("DELETE FROM news WHERE id = ANY(%s)", (list(ids),))
