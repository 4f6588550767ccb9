"""What a notification says, once, for every channel.

A ``Message`` is built from a trigger (see ``core.notify_rules``) and what the run
reported. Its text is plain: each channel makes it safe for its own format (JSON is
escaped by the encoder, Slack's mrkdwn by ``slack_text``, mail headers by
``header_text``), so a task called ``<b>x</b>\\nBcc: evil`` is shown, never obeyed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime

from taskgui.core.notify_rules import Trigger

MAX_ERROR = 2_000  # characters of the run's error text carried; the history has it all
MAX_HELD_SHOWN = 20  # titles a quiet-hours summary lists by name
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f\u2028\u2029\x85]")
_LINE_BREAKS = re.compile(r"[\r\n\t]+")

SCHEMA_VERSION = 1


@dataclass(frozen=True, slots=True, kw_only=True)
class Message:
    trigger: Trigger
    task_id: int
    task_name: str
    at: datetime  # aware UTC: when the attempt finished
    outcome: str = ""  # a RunOutcome value, "" for a recovery
    attempt: int = 0
    max_attempts: int = 0
    error: str = ""
    host: str = ""
    # Trigger.HELD: the titles of what quiet hours held back, oldest first.
    held: tuple[str, ...] = ()

    @property
    def title(self) -> str:
        if self.trigger is Trigger.HELD:
            count = len(self.held)
            return f"{count} notification{'s' if count != 1 else ''} during quiet hours"
        name = one_line(self.task_name)
        return {
            Trigger.FAILED: f"“{name}” failed",
            Trigger.FAILING: f"“{name}” keeps failing",
            Trigger.RECOVERED: f"“{name}” works again",
            Trigger.GAVE_UP: f"“{name}” failed and gave up",
        }[self.trigger]

    @property
    def text(self) -> str:
        error = one_line(self.error)[:MAX_ERROR]
        if self.trigger is Trigger.HELD:
            shown = "; ".join(one_line(title) for title in self.held[:MAX_HELD_SHOWN])
            more = len(self.held) - MAX_HELD_SHOWN
            return (shown + (f"; and {more} more" if more > 0 else "") + ".")[:MAX_ERROR]
        if self.trigger is Trigger.RECOVERED:
            return "The last run succeeded after failures."
        why = f": {error}" if error else ""
        if self.trigger is Trigger.GAVE_UP:
            return f"Gave up after {self.attempt} attempt{'s' if self.attempt != 1 else ''}{why}."
        if self.trigger is Trigger.FAILING:
            return f"Failed again (attempt {self.attempt}){why}."
        return f"Attempt {self.attempt} of {self.max_attempts} {self.outcome or 'failed'}{why}."


def one_line(text: str) -> str:
    """``text`` without control characters or line breaks (NUL included)."""
    return _LINE_BREAKS.sub(" ", _CONTROL.sub("", text)).strip()


def header_text(text: str, limit: int = 200) -> str:
    """Safe as an e-mail header value: one line, no CR/LF/NUL, bounded."""
    return one_line(text)[:limit]


def body(message: Message) -> dict[str, object]:
    """The documented webhook JSON body (README: "Webhook body"), version 1."""
    return {
        "version": SCHEMA_VERSION,
        "event": message.trigger.value,
        "title": message.title,
        "message": message.text,
        "task": {"id": message.task_id, "name": _no_nul(message.task_name)},
        "run": {
            "outcome": message.outcome or None,
            "attempt": message.attempt,
            "max_attempts": message.max_attempts,
            "error": _no_nul(message.error)[:MAX_ERROR],
            "finished_at": message.at.isoformat(),
        },
        "host": message.host,
        **({"held": [_no_nul(title) for title in message.held]} if message.held else {}),
    }


def _no_nul(text: str) -> str:
    return text.replace("\0", "")
