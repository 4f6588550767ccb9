"""Every wait reason the engine can give has words in the table and in the CLI."""

from __future__ import annotations

from datetime import timedelta

import pytest

from taskgui.cli.output import wait_words
from taskgui.core.states import TaskState, WaitReason
from taskgui.core.status import TaskSnapshot, TaskStatus
from taskgui.ui.table.formatting import next_run_text, waiting_text
from tests.helpers.factories import T0, make_spec


@pytest.mark.parametrize("reason", list(WaitReason))
def test_each_reason_reads_as_words(reason: WaitReason) -> None:
    snapshot = TaskSnapshot(make_spec(1, concurrency_key="k"), TaskStatus(waiting=reason))
    table = waiting_text(snapshot)
    cli = wait_words(snapshot, reason.value)
    assert table.startswith("waiting")
    assert cli and "_" not in cli


def test_conditions_say_what_they_wait_for() -> None:
    snapshot = TaskSnapshot(make_spec(1), TaskStatus(waiting=WaitReason.AC_POWER))
    assert waiting_text(snapshot) == "waiting: on battery"
    assert wait_words(snapshot, "ac_power") == "on battery"


def test_a_pause_for_a_while_counts_down_to_its_end() -> None:
    spec = make_spec(1, paused=True, paused_until=T0 + timedelta(minutes=90))
    snapshot = TaskSnapshot(spec, TaskStatus(state=TaskState.PAUSED))
    assert next_run_text(snapshot, T0).startswith("paused, resumes in ")
    assert next_run_text(snapshot, T0 + timedelta(minutes=90)) == "resuming"
    plain = TaskSnapshot(make_spec(1, paused=True), TaskStatus(state=TaskState.PAUSED))
    assert next_run_text(plain, T0) == "paused"
