"""The message text and the webhook body: plain, one-line where it must be, bounded."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from taskgui.core.notify_rules import Trigger
from taskgui.system.notify.message import Message, body, header_text

AT = datetime(2026, 3, 1, 12, 0, tzinfo=UTC)
HOSTILE = "<b>x</b>\r\nBcc: evil@example.org\0\u2028end"


def test_the_body_is_the_documented_version_one_shape() -> None:
    message = Message(
        trigger=Trigger.GAVE_UP, task_id=7, task_name="Backup", at=AT, outcome="failed",
        attempt=3, max_attempts=3, error="exit status 1", host="box",
    )  # fmt: skip
    assert body(message) == {
        "version": 1,
        "event": "gave_up",
        "title": "“Backup” failed and gave up",
        "message": "Gave up after 3 attempts: exit status 1.",
        "task": {"id": 7, "name": "Backup"},
        "run": {
            "outcome": "failed",
            "attempt": 3,
            "max_attempts": 3,
            "error": "exit status 1",
            "finished_at": "2026-03-01T12:00:00+00:00",
        },
        "host": "box",
    }


def test_a_hostile_name_stays_text_and_never_breaks_a_line_or_a_header() -> None:
    message = Message(trigger=Trigger.FAILED, task_id=1, task_name=HOSTILE, at=AT, error=HOSTILE)
    assert "\n" not in message.title and "\r" not in message.title and "\0" not in message.title
    assert "<b>x</b>" in message.title  # shown as written; each channel escapes for itself
    assert "\n" not in header_text(message.title) and "\0" not in header_text(message.title)
    encoded = json.dumps(body(message))
    assert "\\u0000" not in encoded
    assert json.loads(encoded)["task"]["name"] == HOSTILE.replace("\0", "")


def test_a_huge_error_is_cut() -> None:
    message = Message(trigger=Trigger.FAILED, task_id=1, task_name="t", at=AT, error="e" * 10**6)
    assert len(message.text) < 2_100
    assert len(json.dumps(body(message))) < 5_000
