"""What a command finds in its environment: which task it runs for, and its mark.

``TASKGUI_DB`` names the store (so a command can run ``taskgui`` on the same schedule),
and the run mark lets a later start find the run's processes after a crash
(``system.process_tree``).
"""

from __future__ import annotations

from taskgui.core.status import RunTicket
from taskgui.system.process_tree import RUN_MARK, run_mark


def run_environment(database: str | None, ticket: RunTicket, name: str) -> dict[str, str]:
    """The variables added to the environment of ``ticket``'s command."""
    return {
        **({"TASKGUI_DB": database} if database else {}),
        "TASKGUI_TASK_ID": str(ticket.task_id),
        "TASKGUI_TASK_NAME": name,
        "TASKGUI_ATTEMPT": str(ticket.attempt),
        RUN_MARK: run_mark(
            database, ticket.task_id, ticket.kind.value, ticket.scheduled_at, ticket.attempt
        ),
    }
