"""Text for a terminal: control characters made visible, never sent to the terminal.

A name, a command or a line of a crontab is written by whoever wrote the task or the
file (a crontab comment becomes a task name on import). Printed raw, an ESC sequence
in it moves the cursor, recolours or retitles the terminal, hides the rest of the line
or, on some terminals, answers back; a bidi override reorders what follows it so the
line reads differently from what it is. So the CLI's tables, ``show`` and the import
report pass every such text through ``visible``, and its JSON through
``visible_json``.

What is escaped: every C0 and C1 control and DEL (category Cc), the line and
paragraph separators, the bidi embedding, override, isolate and mark characters, and
lone surrogates (which cannot even be encoded for output). They are written the way
Python writes them: ``\\t``, ``\\n``, ``\\r``, ``\\x1b``, ``\\u202e``. A backslash is
left alone, so commands read as typed; ``--json`` is the exact form.
"""

from __future__ import annotations

import re

__all__ = ["visible", "visible_json"]

_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}

# Cc (C0, DEL, C1); ALM; LRM, RLM; LINE and PARAGRAPH SEPARATOR with LRE..RLO;
# LRI..PDI; surrogates.
_HIDDEN = re.compile(
    "[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]"
)
# In JSON the C0 controls are already escaped by json.dumps; the rest is not.
_HIDDEN_IN_JSON = re.compile("[\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069\ud800-\udfff]")


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def visible(text: str) -> str:
    """``text`` with every control, separator and bidi character written as an escape."""
    return _HIDDEN.sub(_escape, text)


def visible_json(dumped: str) -> str:
    """JSON text (from ``json.dumps(..., ensure_ascii=False)``) safe for a terminal.

    Those characters can only stand inside JSON strings, where ``\\uXXXX`` means the
    same character: the document decodes to exactly the same values.
    """
    return _HIDDEN_IN_JSON.sub(lambda match: f"\\u{ord(match.group()):04x}", dumped)
